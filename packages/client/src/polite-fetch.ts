import { backoffDelayMs } from './backoff'
import { RetryBudgetExhaustedError, ThrottledError, type WaitSource, WaitTooLongError } from './errors'
import { parseRetryAfter } from './http-date'
import { type PoliteFetchOptions, resolveOptions, type Settings } from './options'
import { parseRateLimitHeaders } from './rate-limit-headers'
import { sleepUnlessAborted } from './sleep'

// RFC 9110 s9.2.2: repeating one of these has the same effect on the server as sending it once.
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])
const IDEMPOTENCY_KEY = 'idempotency-key'

/**
 * `fetch`, made polite: a 429 or 503 is retried after the wait the server asked for (`Retry-After`, in seconds or
 * as an HTTP-date, or a rate-limit reset with nothing remaining), otherwise after exponential backoff with full
 * jitter. Retry n (the first retry is n = 1, made after attempt 1) waits random(0, min(cap, base * 2^(n-1))).
 * After `maxAttempts` attempts it resolves with the last response, body unread. It never waits less than
 * `Retry-After` says, and gives up at once with a {@link WaitTooLongError} when asked to wait longer than
 * `maxWaitMs`.
 *
 * Only requests that are safe to repeat are retried: idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE),
 * and other methods only when they carry an `Idempotency-Key` (see the `idempotencyKey` option). A body that is a
 * stream (a `ReadableStream` or an async iterable) can be sent only once, so such a request gets a single attempt.
 * Aborting `init.signal` (or the Request's signal) stops a wait at once, rejecting with the signal's reason.
 *
 * `maxAttempts` bounds the retries of one request. To bound those of a whole client, pass a `retryBudget`
 * ({@link createRetryBudget}), and to stop sending to a server that refuses most work, a `throttle`
 * ({@link createAdaptiveThrottle}); one of each is shared by every call given it.
 *
 * @example
 * const res = await politeFetch('https://api.example.com/orders', { method: 'POST', body }, { idempotencyKey: true })
 * if (!res.ok) console.error(res.status, await res.text())
 */
export async function politeFetch(
  input: string | URL | Request,
  init?: RequestInit,
  options: PoliteFetchOptions = {},
): Promise<Response> {
  return send(input, init, resolveOptions(options))
}

/**
 * Makes a {@link politeFetch} with defaults of its own, checked once here; options given at a call override them.
 *
 * @example
 * const fetchPolitely = createPoliteFetch({ maxAttempts: 3, maxWaitMs: 10_000 })
 * const res = await fetchPolitely('https://api.example.com/things')
 */
export function createPoliteFetch(defaults: PoliteFetchOptions = {}) {
  const settings = resolveOptions(defaults)
  return async function politeFetchWithDefaults(
    input: string | URL | Request,
    init?: RequestInit,
    options?: PoliteFetchOptions,
  ): Promise<Response> {
    return send(input, init, options === undefined ? settings : resolveOptions({ ...defaults, ...options }))
  }
}

async function send(input: string | URL | Request, init: RequestInit | undefined, settings: Settings) {
  // By shape, not `instanceof`: a Request of another fetch implementation or realm must be cloned all the same.
  const request =
    typeof input === 'object' && typeof (input as Partial<Request>).clone === 'function'
      ? (input as Request)
      : undefined
  const signal = init?.signal ?? request?.signal ?? undefined
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase()
  // init.headers replaces a Request's headers in fetch, so the same precedence holds here.
  const headers = new Headers(init?.headers ?? request?.headers)
  if (settings.idempotencyKey !== false && !headers.has(IDEMPOTENCY_KEY)) {
    const key = settings.idempotencyKey === true ? globalThis.crypto.randomUUID() : settings.idempotencyKey
    headers.set(IDEMPOTENCY_KEY, key)
  }
  const retryable =
    (IDEMPOTENT_METHODS.has(method) || headers.has(IDEMPOTENCY_KEY)) &&
    (init?.body === undefined ? request?.bodyUsed !== true : isReplayable(init.body))
  const fetchImpl = settings.fetch ?? globalThis.fetch

  const { throttle, retryBudget } = settings
  const target = request?.url ?? String(input)
  // Why a retry may not be sent, as the error to throw when there is no response to return: adaptive throttling
  // asks first (it refuses without counting), then the budget (which counts a retry it grants). Asked before the
  // wait, so that a refused retry never waits.
  const refusal = (attempt: number, cause: unknown) => {
    if (throttle !== undefined && !throttle.admit(target)) {
      return new ThrottledError(throttle.refusalProbability(target), attempt, cause)
    }
    if (retryBudget !== undefined && !retryBudget.tryRetry(target)) return new RetryBudgetExhaustedError(attempt, cause)
    return undefined
  }

  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted()
    if (attempt === 1) {
      if (throttle !== undefined && !throttle.admit(target)) {
        throw new ThrottledError(throttle.refusalProbability(target), 0)
      }
      retryBudget?.recordRequest(target)
    }
    let response: Response
    try {
      // A Request's body can be read once: each attempt sends a clone and leaves the original unread.
      response = await fetchImpl(request ? request.clone() : input, { ...init, headers })
    } catch (error) {
      const networkError = isNetworkError(error) && !signal?.aborted
      if (networkError) throttle?.record(target, false)
      if (!networkError || !settings.retryNetworkErrors || !retryable || attempt >= settings.maxAttempts) throw error
      const notRetried = refusal(attempt, error)
      if (notRetried !== undefined) throw notRetried
      const waitMs = backoffDelayMs(attempt, settings)
      settings.onRetry?.({ attempt, waitMs, reason: 'network-error', source: 'backoff', error })
      await sleepUnlessAborted(settings.sleep, waitMs, signal)
      continue
    }
    const refusedByServer = settings.retryOn.includes(response.status)
    throttle?.record(target, !refusedByServer)
    if (!refusedByServer || !retryable || attempt >= settings.maxAttempts) return response

    const plan = planWait(response, attempt, settings)
    if (plan.asked > settings.maxWaitMs) {
      throw new WaitTooLongError(response, plan.asked, settings.maxWaitMs, plan.source)
    }
    if (refusal(attempt, undefined) !== undefined) return response
    // undici holds the connection until the body is read or cancelled; this response will not be read.
    await response.body?.cancel().catch(() => undefined)
    settings.onRetry?.({ attempt, waitMs: plan.waitMs, reason: 'status', source: plan.source, response })
    await sleepUnlessAborted(settings.sleep, plan.waitMs, signal)
  }
}

/** The wait before retry n = `attempt`; `asked` is the part the server asked for (0 for backoff). */
function planWait(response: Response, attempt: number, settings: Settings) {
  const nowMs = settings.now()
  let asked = parseRetryAfter(response.headers, nowMs)
  let source: WaitSource = 'retry-after'
  if (asked === undefined) {
    // Without Retry-After, a quota with nothing left says when it comes back (GitHub sends only X-RateLimit-Reset).
    const info = parseRateLimitHeaders(response.headers, { now: () => nowMs })
    if (info?.remaining === 0 && info.resetMs !== undefined) {
      asked = info.resetMs
      source = 'rate-limit-reset'
    }
  }
  if (asked === undefined) return { waitMs: backoffDelayMs(attempt, settings), asked: 0, source: 'backoff' as const }
  const spread = settings.jitter === 'full' ? backoffDelayMs(attempt, settings) : 0
  return { waitMs: asked + spread, asked, source }
}

/**
 * The fetch standard reports a network error as a TypeError; anything else (an abort, a bug) is not retried. The
 * name is compared, not the class: Node's fetch throws a TypeError of its own realm, which fails `instanceof` in a
 * vm context such as a jest environment.
 */
function isNetworkError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TypeError'
}

/**
 * Whether fetch can send this body again: everything but a stream (a ReadableStream or an async iterable), which
 * the first attempt consumes. Checked by shape rather than class, so bodies from another realm are judged right.
 */
function isReplayable(body: RequestInit['body']): boolean {
  if (typeof body !== 'object' || body === null) return true
  const candidate = body as { getReader?: unknown; [Symbol.asyncIterator]?: unknown }
  return typeof candidate.getReader !== 'function' && typeof candidate[Symbol.asyncIterator] !== 'function'
}
