// The brand every Sluice error carries, the same global symbol as @sluice/core's (this package has no dependency to
// share it from): the ESM and CommonJS builds of the client each define these classes, and `instanceof` reads the
// brand, so an error thrown by one copy is an instance of the other's class.
const ERROR_BRAND = Symbol.for('sluice.error')

/** A client error's stable `code`, one per class: match on it (or on `instanceof`), never on the message. */
export type ClientErrorCode =
  | 'SLUICE_CLIENT_INVALID_OPTION'
  | 'SLUICE_WAIT_TOO_LONG'
  | 'SLUICE_CIRCUIT_OPEN'
  | 'SLUICE_RETRY_BUDGET_EXHAUSTED'
  | 'SLUICE_THROTTLED'

/** Brands `errorClass` with `code` and makes `instanceof` read the brand (a subclass keeps the prototype check). */
function brandError(errorClass: abstract new (...args: never[]) => Error, code: ClientErrorCode): void {
  Object.defineProperty(errorClass.prototype, ERROR_BRAND, { value: code })
  Object.defineProperty(errorClass, Symbol.hasInstance, {
    value: function hasInstance(this: typeof errorClass, value: unknown): boolean {
      if (this !== errorClass) return Function.prototype[Symbol.hasInstance].call(this, value)
      return typeof value === 'object' && value !== null && (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] === code
    },
  })
}

/**
 * Thrown when an option of the client is invalid. `option` names the option at fault, so a configuration mistake
 * is found at the first call rather than as a strange wait later.
 *
 * @example
 * try { await politeFetch(url, {}, { maxAttempts: 0 }) } catch (err) {
 *   if (err instanceof ClientOptionError) console.error(err.option) // 'maxAttempts'
 * }
 */
export class ClientOptionError extends TypeError {
  override readonly name = 'ClientOptionError'
  readonly code = 'SLUICE_CLIENT_INVALID_OPTION'
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(`@sluice/client: option "${option}" ${detail}`)
  }
}
brandError(ClientOptionError, 'SLUICE_CLIENT_INVALID_OPTION')

/** Where a planned wait came from: the server's `Retry-After`, a rate-limit reset, or our own backoff. */
export type WaitSource = 'retry-after' | 'rate-limit-reset' | 'backoff'

/**
 * The server asked for a wait longer than `maxWaitMs`, so {@link politeFetch} gave up at once instead of sleeping.
 * The usual cause is a server sending a Unix time where seconds were expected, which would otherwise mean a wait
 * of decades. `response` is the refused response, its body unread, for the caller to inspect.
 *
 * @example
 * try { await politeFetch(url) } catch (err) {
 *   if (err instanceof WaitTooLongError) console.warn(`asked to wait ${err.waitMs} ms`, err.response.status)
 * }
 */
export class WaitTooLongError extends Error {
  override readonly name = 'WaitTooLongError'
  readonly code = 'SLUICE_WAIT_TOO_LONG'
  constructor(
    readonly response: Response,
    readonly waitMs: number,
    readonly maxWaitMs: number,
    readonly source: WaitSource,
  ) {
    super(
      `@sluice/client: ${response.status} asked for a wait of ${waitMs} ms (from ${source}), ` +
        `longer than maxWaitMs (${maxWaitMs} ms); gave up instead of waiting`,
    )
  }
}
brandError(WaitTooLongError, 'SLUICE_WAIT_TOO_LONG')

/**
 * A call was refused by an open circuit breaker (or by a half-open one whose single trial call is in flight),
 * without running it. `retryAfterMs` says when the breaker will let a trial call through.
 *
 * @example
 * try { await breaker(() => fetch(url)) } catch (err) {
 *   if (err instanceof CircuitOpenError) console.warn(`circuit open, next trial in ${err.retryAfterMs} ms`)
 * }
 */
export class CircuitOpenError extends Error {
  override readonly name = 'CircuitOpenError'
  readonly code = 'SLUICE_CIRCUIT_OPEN'
  constructor(
    readonly state: 'open' | 'half-open',
    readonly retryAfterMs: number,
  ) {
    super(
      state === 'open'
        ? `@sluice/client: circuit open, calls fail fast for another ${retryAfterMs} ms`
        : '@sluice/client: circuit half-open and its trial call is in flight; this call fails fast',
    )
  }
}
brandError(CircuitOpenError, 'SLUICE_CIRCUIT_OPEN')

/**
 * A retry was due after a network error, but the retry budget was spent, so it was not sent. Thrown only when
 * there is no response to give back: after a refused response, {@link politeFetch} resolves with that response.
 * `cause` is the network error of the last attempt.
 *
 * @example
 * try { await politeFetch(url, undefined, { retryBudget }) } catch (err) {
 *   if (err instanceof RetryBudgetExhaustedError) console.warn(`gave up after ${err.attempts}`, err.cause)
 * }
 */
export class RetryBudgetExhaustedError extends Error {
  override readonly name = 'RetryBudgetExhaustedError'
  readonly code = 'SLUICE_RETRY_BUDGET_EXHAUSTED'
  constructor(
    readonly attempts: number,
    cause: unknown,
  ) {
    super(
      `@sluice/client: the retry budget is spent, so the retry after attempt ${attempts} (a network error) was not sent`,
      { cause },
    )
  }
}
brandError(RetryBudgetExhaustedError, 'SLUICE_RETRY_BUDGET_EXHAUSTED')

/**
 * Adaptive throttling refused a request locally, without sending it: the server has been refusing most of this
 * client's requests. Thrown when there is no response to give back (the first attempt, or a retry after a network
 * error, whose error is then the `cause`); a retry refused after a refused response resolves with that response.
 *
 * @example
 * try { await politeFetch(url, undefined, { throttle }) } catch (err) {
 *   if (err instanceof ThrottledError) console.warn(`refused locally (p = ${err.refusalProbability})`)
 * }
 */
export class ThrottledError extends Error {
  override readonly name = 'ThrottledError'
  readonly code = 'SLUICE_THROTTLED'
  constructor(
    readonly refusalProbability: number,
    readonly attempts: number,
    cause?: unknown,
  ) {
    super(
      `@sluice/client: refused locally by adaptive throttling (refusal probability ${refusalProbability.toFixed(3)}), ` +
        `after ${attempts} attempt(s) sent`,
      cause === undefined ? undefined : { cause },
    )
  }
}
brandError(ThrottledError, 'SLUICE_THROTTLED')

/** Throws a {@link ClientOptionError} that says what the option must be and what it got. */
export function invalidOption(option: string, rule: string, received: unknown): never {
  throw new ClientOptionError(option, `${rule}; received ${describeValue(received)}`)
}

/** A short description of a received value for error messages. */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) {
    return String(value)
  }
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}
