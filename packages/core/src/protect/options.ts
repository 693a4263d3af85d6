import { type Duration, parseDuration } from '../duration'
import { describe, InvalidOptionError } from '../errors'
import type { Timers } from './timers'

/**
 * Rejects option names that are not in `known`, so a misspelt option (`maxInflight`) is an error at construction
 * rather than a silently ignored setting. `renamed` points the names of other libraries to ours; `path` is put
 * before a nested option's name (`'adaptive.'`).
 */
export function checkOptionNames(
  options: object,
  known: readonly string[],
  what: string,
  renamed: Readonly<Record<string, string>> = {},
  path = '',
): void {
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue
    const hint = renamed[name] === undefined ? '' : ` (use \`${renamed[name]}\`)`
    throw new InvalidOptionError(`${path}${name}`, `is not an option of ${what}${hint}`)
  }
}

/** Throws unless `options` is an object. */
export function checkObject(options: unknown, what: string): asserts options is object {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidOptionError('options', `of ${what} must be an object (got ${describe(options)})`)
  }
}

/** A whole number of at least `min`, or `fallback` when absent. */
export function wholeNumber(value: unknown, option: string, min: number, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback
  if (value === undefined) throw new InvalidOptionError(option, 'is required')
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    const range = min === 0 ? 'a whole number, 0 or more' : `a whole number, at least ${min}`
    throw new InvalidOptionError(option, `must be ${range} (got ${describe(value)})`)
  }
  return value
}

/** A duration in whole milliseconds, or `fallback` when absent. */
export function durationMs(value: unknown, option: string, fallback?: Duration): number {
  if (value === undefined && fallback === undefined) throw new InvalidOptionError(option, 'is required')
  return parseDuration(value ?? fallback, option)
}

/** A function, or undefined. */
export function optionalFunction(value: unknown, option: string): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new InvalidOptionError(option, `must be a function (got ${describe(value)})`)
  }
}

/** An injected time source must have the three methods the parts call. */
export function checkTimers(value: unknown): void {
  if (value === undefined) return
  const timers = value as Partial<Timers> | null
  if (
    timers === null ||
    typeof timers !== 'object' ||
    typeof timers.now !== 'function' ||
    typeof timers.setTimeout !== 'function' ||
    typeof timers.clearTimeout !== 'function'
  ) {
    throw new InvalidOptionError('timers', `must have now(), setTimeout() and clearTimeout() (got ${describe(value)})`)
  }
}
