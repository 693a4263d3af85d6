// The option checks every package shares, so a mistake reads the same wherever it is made:
// `option "<name>" must be <what it accepts> (got <what it got>)`, thrown as an InvalidOptionError at construction.
import { type Duration, parseDuration } from './duration'
import { describe, InvalidOptionError } from './errors'
import { MAX_TIMER_MS } from './long-timeout'

/**
 * Whether a value is a cost: a positive whole number, exact in a double.
 *
 * @example
 * if (!isCost(value)) throw new TypeError(`cost must be a positive whole number (got ${describeValue(value)})`)
 */
export function isCost(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}

/**
 * Checks that options (or a nested group of them) are an object.
 *
 * @example
 * checkObject(options, 'options', 'with a client')
 */
export function checkObject(value: unknown, option: string, what = ''): asserts value is object {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionError(option, `must be an object${what ? ` ${what}` : ''} (got ${describe(value)})`)
  }
}

/**
 * Checks a whole-number option: at least `min` (default 1), optionally with its `unit` in the message. An optional
 * option gets its default before the check (`options.timeout ?? 100`), so `undefined` here is a required one missing.
 *
 * @example
 * const timeout = checkWholeNumber(options.timeout ?? 100, 'timeout', { unit: 'milliseconds' })
 */
export function checkWholeNumber(value: unknown, option: string, { min = 1, unit = '' } = {}): number {
  if (value === undefined) throw new InvalidOptionError(option, 'is required')
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    const what = min === 1 ? 'a positive whole number' : `a whole number of at least ${min}`
    throw new InvalidOptionError(option, `must be ${what}${unit ? ` of ${unit}` : ''} (got ${describe(value)})`)
  }
  return value
}

/**
 * Checks a positive whole number of milliseconds that a timer waits: at most {@link MAX_TIMER_MS} (about 24.8 days),
 * since a longer timer fires after 1 ms, and one re-armed for it becomes a 1 ms loop.
 *
 * @example
 * const sweepIntervalMs = checkTimerMs(options.sweepIntervalMs ?? 60_000, 'sweepIntervalMs')
 */
export function checkTimerMs(value: unknown, option: string, { unit = '' } = {}): number {
  const ms = checkWholeNumber(value, option, { unit })
  if (ms > MAX_TIMER_MS) {
    throw new InvalidOptionError(
      option,
      `must be at most ${MAX_TIMER_MS} milliseconds, about 24.8 days: the longest a timer waits (got ${ms})`,
    )
  }
  return ms
}

/**
 * Checks a true-or-false option; an optional one gets its default before the check (`options.coalesce ?? true`).
 *
 * @example
 * const coalesce = checkBoolean(options.coalesce ?? true, 'coalesce')
 */
export function checkBoolean(value: unknown, option: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidOptionError(option, `must be true or false (got ${describe(value)})`)
  return value
}

/**
 * Checks an optional function option: undefined, or a function.
 *
 * @example
 * const skip = checkFunction<(req: Request) => boolean>(options.skip, 'skip')
 */
export function checkFunction<F>(value: unknown, option: string): F | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw new InvalidOptionError(option, `must be a function (got ${describe(value)})`)
  }
  return value as F | undefined
}

/**
 * Checks an option that takes one of a few names.
 *
 * @example
 * const onError = checkOneOf(options.onError ?? 'local', 'onError', ['local', 'open', 'closed'] as const)
 */
export function checkOneOf<T extends string>(value: unknown, option: string, values: readonly T[]): T {
  if (!values.includes(value as T)) {
    throw new InvalidOptionError(
      option,
      `must be one of ${values.map((v) => `'${v}'`).join(', ')} (got ${describe(value)})`,
    )
  }
  return value as T
}

/**
 * An HTTP error status given as an option (`statusCode`), 400 to 599, or the fallback when it is left out.
 *
 * @example
 * const statusCode = checkErrorStatus(options.statusCode, 429) // 429, or the one given
 */
export function checkErrorStatus(value: unknown, fallback: number): number {
  const status = value ?? fallback
  if (!Number.isInteger(status) || (status as number) < 400 || (status as number) > 599) {
    throw new InvalidOptionError('statusCode', `must be an HTTP error status from 400 to 599 (got ${describe(status)})`)
  }
  return status as number
}

/**
 * Checks a duration option (milliseconds or a string such as `'1m'`) into whole milliseconds; `fallback` when it is
 * absent, and "is required" when there is none.
 *
 * @example
 * const maxWaitMs = checkDuration(options.maxWait, 'maxWait', '1s')
 */
export function checkDuration(value: unknown, option: string, fallback?: Duration): number {
  if (value === undefined && fallback === undefined) throw new InvalidOptionError(option, 'is required')
  return parseDuration(value ?? fallback, option)
}

/**
 * Rejects option names that are not in `known`, so a misspelt option (`maxInflight`) is an error at construction
 * rather than a silently ignored setting. `renamed` points the names of other libraries to ours; `path` is put
 * before a nested option's name (`'adaptive.'`).
 *
 * @example
 * checkOptionNames(options, ['limit', 'key'], 'concurrencyLimit', { max: 'limit' })
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
