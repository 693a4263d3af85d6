import { checkObject } from './checks'
import { describe, InvalidOptionError } from './errors'

/**
 * Where Sluice reports what a developer should know: a spoofable header, two limiters sharing their counts, a store
 * outage and its end. Every package takes this one shape, and `console` fits it.
 *
 * @example
 * const logger: Logger = { warn: (m) => log.warn(m), error: (m, e) => log.error({ err: e }, m), info: (m) => log.info(m) }
 * app.use(rateLimit({ limit: 100, window: '1m', logger }))
 */
export interface Logger {
  warn(message: string, error?: unknown): void
  error(message: string, error?: unknown): void
  /** Good news (a store answering again after an outage); optional, since nothing is wrong. */
  info?(message: string): void
}

/**
 * Validates a `logger` option: `warn()` and `error()` are required, `info()` may be left out.
 *
 * @example
 * const logger = checkLogger(options.logger ?? console)
 */
export function checkLogger(value: unknown, option = 'logger'): Logger {
  checkObject(value, option, 'with warn() and error() methods')
  const { warn, error, info } = value as Partial<Record<keyof Logger, unknown>>
  if (typeof warn !== 'function' || typeof error !== 'function' || (info !== undefined && typeof info !== 'function')) {
    throw new InvalidOptionError(option, `must have warn() and error() methods (got ${describe(value)})`)
  }
  return value as Logger
}
