/**
 * Thrown at construction when an option is missing or invalid. `option` names the option at fault
 * (for example `limit` or `rules[1].window`), so a configuration mistake is found before the first request.
 *
 * @example
 * try { createLimiter({ limit: 0, window: '1m' }) } catch (err) {
 *   if (err instanceof InvalidOptionError) console.error(err.option) // 'limit'
 * }
 */
export class InvalidOptionError extends TypeError {
  override readonly name = 'InvalidOptionError'
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(`sluice: option "${option}" ${detail}`)
  }
}

/** A short description of a received value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) {
    return String(value)
  }
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}
