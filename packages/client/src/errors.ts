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
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(`@sluice/client: option "${option}" ${detail}`)
  }
}

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
