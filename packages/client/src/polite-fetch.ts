import { backoffDelayMs, type Jitter } from './backoff'
import { invalidOption, type WaitSource, WaitTooLongError } from './errors'
import { parseRetryAfter } from './http-date'
import { parseRateLimitHeaders } from './rate-limit-headers'
import { type Sleep, sleepUnlessAborted, timerSleep } from './sleep'

/** The shape of `fetch` that {@link politeFetch} calls; inject one with the `fetch` option. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** What {@link PoliteFetchOptions.onRetry} is told before each wait. */
export interface RetryEvent {
  /**
   * The attempt that just failed, counting the first try as 1. The retry about to be made is retry n = `attempt`,
   * and it will be attempt `attempt + 1`.
   */
  attempt: number
  /** How long the client will now wait, in ms. */
  waitMs: number
  /** `'status'`: the response had a status in `retryOn`; `'network-error'`: fetch rejected with a TypeError. */
  reason: 'status' | 'network-error'
  /** Where the wait came from: `Retry-After`, a rate-limit reset with nothing remaining, or backoff. */
  source: WaitSource
  /** The refused response (its body already cancelled), when `reason` is `'status'`. */
  response?: Response
  /** The network error, when `reason` is `'network-error'`. */
  error?: unknown
}

/** Options of {@link politeFetch}. Every one is optional; the defaults are given with each. */
export interface PoliteFetchOptions {
  /** The most attempts, counting the first try: 5 means the first try and up to 4 retries. Default 5. */
  maxAttempts?: number
  /** `base`: the bound of the first retry's backoff, in ms. Default 500. */
  baseDelayMs?: number
  /** `cap`: the largest bound of a backoff, in ms. Default 10 000. */
  maxDelayMs?: number
  /**
   * `'full'`: a backoff is drawn uniformly in [0, min(cap, base * 2^(n-1))], and a wait the server asked for gets a
   * random extra of the same range on top (never less than asked), so a crowd refused at once comes back spread
   * out. `'none'`: the bound itself, and exactly what the server asked. Default `'full'`.
   */
  jitter?: Jitter
  /**
   * Give up at once with a {@link WaitTooLongError} when `Retry-After` or a rate-limit reset asks for a longer
   * wait than this, in ms. `Infinity` waits for anything. Default 60 000.
   */
  maxWaitMs?: number
  /** The statuses that are retried. Default `[429, 503]`. */
  retryOn?: readonly number[]
  /** Whether a network error (fetch rejecting with a TypeError) is retried, for requests safe to retry. Default true. */
  retryNetworkErrors?: boolean
  /**
   * Adds an `Idempotency-Key` header so that a non-idempotent request (POST, PATCH, ...) may be retried: `true`
   * generates one (`crypto.randomUUID()`), a string is used as is. The same key goes with every retry. A key the
   * caller already set in the headers is kept and this option ignored. Default `false`.
   */
  idempotencyKey?: boolean | string
  /** A uniform random number in [0, 1), for the jitter. Default `Math.random`. */
  random?: () => number
  /** Waits ms; must reject when the signal aborts (the client also stops waiting by itself). Default: `setTimeout`. */
  sleep?: Sleep
  /** The time in ms, to turn an HTTP-date into a wait when the response has no `Date` header. Default `Date.now`. */
  now?: () => number
  /** The fetch to call. Default: the global `fetch`, looked up at each call. */
  fetch?: FetchLike
  /** Called before each wait, for logging and tests. */
  onRetry?: (event: RetryEvent) => void
}

interface Settings {
  maxAttempts: number
  baseDelayMs: number
  maxDelayMs: number
  jitter: Jitter
  maxWaitMs: number
  retryOn: readonly number[]
  retryNetworkErrors: boolean
  idempotencyKey: boolean | string
  random: () => number
  sleep: Sleep
  now: () => number
  fetch: FetchLike | undefined
  onRetry: ((event: RetryEvent) => void) | undefined
}

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
  resolveOptions(defaults)
  return function politeFetchWithDefaults(
    input: string | URL | Request,
    init?: RequestInit,
    options: PoliteFetchOptions = {},
  ): Promise<Response> {
    return send(input, init, resolveOptions({ ...defaults, ...options }))
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

  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted()
    let response: Response
    try {
      // A Request's body can be read once: each attempt sends a clone and leaves the original unread.
      response = await fetchImpl(request ? request.clone() : input, { ...init, headers })
    } catch (error) {
      const networkError = isNetworkError(error) && settings.retryNetworkErrors && !signal?.aborted
      if (!networkError || !retryable || attempt >= settings.maxAttempts) throw error
      const waitMs = backoffDelayMs(attempt, settings)
      settings.onRetry?.({ attempt, waitMs, reason: 'network-error', source: 'backoff', error })
      await sleepUnlessAborted(settings.sleep, waitMs, signal)
      continue
    }
    if (!settings.retryOn.includes(response.status) || !retryable || attempt >= settings.maxAttempts) return response

    const plan = planWait(response, attempt, settings)
    if (plan.asked > settings.maxWaitMs) {
      throw new WaitTooLongError(response, plan.asked, settings.maxWaitMs, plan.source)
    }
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

function resolveOptions(options: PoliteFetchOptions): Settings {
  const settings: Settings = {
    maxAttempts: options.maxAttempts ?? 5,
    baseDelayMs: options.baseDelayMs ?? 500,
    maxDelayMs: options.maxDelayMs ?? 10_000,
    jitter: options.jitter ?? 'full',
    maxWaitMs: options.maxWaitMs ?? 60_000,
    retryOn: options.retryOn ?? [429, 503],
    retryNetworkErrors: options.retryNetworkErrors ?? true,
    idempotencyKey: options.idempotencyKey ?? false,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? timerSleep,
    now: options.now ?? Date.now,
    fetch: options.fetch,
    onRetry: options.onRetry,
  }
  if (!Number.isInteger(settings.maxAttempts) || settings.maxAttempts < 1) {
    invalidOption('maxAttempts', 'must be an integer >= 1 (the first try counts)', options.maxAttempts)
  }
  // A backoff is a wait the client chooses, so it must be finite; maxWaitMs only bounds what the server may ask.
  for (const name of ['baseDelayMs', 'maxDelayMs'] as const) {
    const value = settings[name]
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      invalidOption(name, 'must be a finite number of ms >= 0', options[name])
    }
  }
  if (typeof settings.maxWaitMs !== 'number' || Number.isNaN(settings.maxWaitMs) || settings.maxWaitMs < 0) {
    invalidOption('maxWaitMs', 'must be a number of ms >= 0 (Infinity waits for anything)', options.maxWaitMs)
  }
  if (settings.jitter !== 'full' && settings.jitter !== 'none')
    invalidOption('jitter', "must be 'full' or 'none'", options.jitter)
  if (
    !Array.isArray(settings.retryOn) ||
    !settings.retryOn.every((status) => Number.isInteger(status) && status >= 100 && status <= 599)
  ) {
    invalidOption('retryOn', 'must be an array of HTTP status codes', options.retryOn)
  }
  if (typeof settings.retryNetworkErrors !== 'boolean') {
    invalidOption('retryNetworkErrors', 'must be a boolean', options.retryNetworkErrors)
  }
  const key = settings.idempotencyKey
  // RFC 9110 s5.5: a field value of visible ASCII; a key is a token the server compares byte for byte.
  if (typeof key !== 'boolean' && !(typeof key === 'string' && /^[\x21-\x7e]+$/.test(key))) {
    invalidOption('idempotencyKey', 'must be true, false or a non-empty string of visible ASCII', key)
  }
  for (const name of ['random', 'sleep', 'now'] as const) {
    if (typeof settings[name] !== 'function') invalidOption(name, 'must be a function', options[name])
  }
  for (const name of ['fetch', 'onRetry'] as const) {
    if (settings[name] !== undefined && typeof settings[name] !== 'function') {
      invalidOption(name, 'must be a function', options[name])
    }
  }
  return settings
}
