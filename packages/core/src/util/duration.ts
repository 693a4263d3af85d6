import { describe, InvalidOptionError } from './errors'

/**
 * A duration: integer milliseconds, or a string such as `'500ms'`, `'10s'`, `'1.5m'`, `'1h'`, `'1d'`.
 *
 * @example
 * const window: Duration = '15m' // or 900_000
 */
export type Duration = number | `${number}${DurationUnit}` | `${number} ${DurationUnit}`
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd'

const UNIT_MS: Record<DurationUnit, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const DURATION = /^(\d+(?:\.\d+)?) ?(ms|s|m|h|d)$/

/**
 * Parses a duration into a positive whole number of milliseconds, or throws an {@link InvalidOptionError}
 * naming `option`.
 *
 * @example
 * parseDuration('1.5s') // 1500
 * parseDuration(250)    // 250
 */
export function parseDuration(value: unknown, option = 'window'): number {
  let ms: number
  if (typeof value === 'number') {
    ms = value
  } else if (typeof value === 'string') {
    const match = DURATION.exec(value.trim())
    if (!match) {
      throw new InvalidOptionError(
        option,
        `must be milliseconds or a duration such as '500ms', '10s', '1m', '1h', '1d' (got ${describe(value)})`,
      )
    }
    ms = Number(match[1]) * UNIT_MS[match[2] as DurationUnit]
    // '1.5s' is 1500 ms exactly, but 0.1 * 3 style artefacts must not turn a whole value into 299.99999.
    ms = Math.round(ms * 1e6) / 1e6
  } else {
    throw new InvalidOptionError(
      option,
      `must be a number of milliseconds or a duration string (got ${describe(value)})`,
    )
  }
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new InvalidOptionError(option, `must be a positive whole number of milliseconds (got ${describe(value)})`)
  }
  return ms
}
