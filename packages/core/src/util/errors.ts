import { type EventKeys, keyHash } from './key-hash'

/**
 * The brand every Sluice error carries on its prototype: a key of the global symbol registry, so the ESM and the
 * CommonJS builds (and two installed versions) of a package share it, where each defines its own classes. An app
 * that `import`s `@sluice/redis` while its framework adapter is `require`d holds two copies of these classes, and a
 * plain `instanceof` would tell a store that fails closed from any other error by the copy that threw it.
 */
const ERROR_BRAND = Symbol.for('sluice.error')

/** A Sluice error's stable `code`, one per class: match on it (or on `instanceof`), never on the message. */
export type SluiceErrorCode =
  | 'SLUICE_INVALID_OPTION'
  | 'SLUICE_STORE_UNAVAILABLE'
  | 'SLUICE_STORE_KEY'
  | 'SLUICE_RATE_LIMITED'

/**
 * Gives `errorClass` its brand, and makes `instanceof` read it: an error thrown by another copy of the class (the
 * other module format, another version) is an instance too. A subclass keeps the ordinary prototype check.
 *
 * @example
 * export class StoreUnavailableError extends Error { readonly code = 'SLUICE_STORE_UNAVAILABLE' }
 * brandError(StoreUnavailableError, 'SLUICE_STORE_UNAVAILABLE')
 */
export function brandError(errorClass: abstract new (...args: never[]) => Error, code: SluiceErrorCode): void {
  Object.defineProperty(errorClass.prototype, ERROR_BRAND, { value: code })
  Object.defineProperty(errorClass, Symbol.hasInstance, {
    value: function hasInstance(this: typeof errorClass, value: unknown): boolean {
      if (this !== errorClass) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] === code
    },
  })
}

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
  readonly code = 'SLUICE_INVALID_OPTION'
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(`sluice: option "${option}" ${detail}`)
  }
}
brandError(InvalidOptionError, 'SLUICE_INVALID_OPTION')

/**
 * A short description of a received value, for the "(got ...)" of an error message.
 *
 * @example
 * throw new InvalidOptionError('timeout', `must be a positive number (got ${describe(options.timeout)})`)
 */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) {
    return String(value)
  }
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}

/**
 * A store could not decide (for example Redis is down and the store's policy is to fail closed). The HTTP
 * adapters answer it with 503 Service Unavailable rather than 429: the client is not over its limit.
 *
 * @example
 * try { await limiter.consume(key) } catch (err) {
 *   if (err instanceof StoreUnavailableError) reply503()
 * }
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError'
  readonly code = 'SLUICE_STORE_UNAVAILABLE'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
brandError(StoreUnavailableError, 'SLUICE_STORE_UNAVAILABLE')

/**
 * A store could not decide for one key because of what it holds for that key (for example a Redis key that
 * something else wrote: a list, or bytes that are no rate-limit state). It concerns that key alone: other keys are
 * decided as usual, and the store is not unavailable. The HTTP adapters answer it by `onError` ('closed': 503,
 * 'open': admitted uncounted); the store has already logged it, once per key. Deleting the key (`limiter.reset(key)`)
 * or its expiry ends it.
 *
 * Keys are often personal data or secrets, and errors end up in logs: the error carries the key's `keyHash`, and the
 * key itself only when the limiter has `eventKeys: 'raw'` (the store passes it on as `options.eventKeys`). A store
 * writes its message the same way.
 *
 * @example
 * try { await limiter.consume(key) } catch (err) {
 *   if (err instanceof StoreKeyError) console.error(`rule ${err.rule}: the key ${err.keyHash} is unusable`)
 * }
 */
export class StoreKeyError extends Error {
  override readonly name = 'StoreKeyError'
  readonly code = 'SLUICE_STORE_KEY'
  /** The first 16 hex digits of the SHA-256 of the key (see `keyHash`). */
  readonly keyHash: string
  /** The key, as the limiter was given it: only with `eventKeys: 'raw'`, undefined otherwise. */
  readonly key: string | undefined
  constructor(
    message: string,
    key: string,
    /** The name of the rule whose state for `key` is unusable. */
    readonly rule: string,
    options?: { cause?: unknown; eventKeys?: EventKeys | undefined },
  ) {
    super(message, options !== undefined && 'cause' in options ? { cause: options.cause } : undefined)
    this.keyHash = keyHash(key)
    this.key = options?.eventKeys === 'raw' ? key : undefined
  }
}
brandError(StoreKeyError, 'SLUICE_STORE_KEY')
