import type { AdaptiveThrottle } from './adaptive-throttle'
import type { Jitter } from './backoff'
import { invalidOption, type WaitSource } from './errors'
import type { RetryBudget } from './retry-budget'
import { type Sleep, timerSleep } from './sleep'

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
  /**
   * A retry budget shared with other calls ({@link createRetryBudget}): a retry it refuses is not sent, and the
   * refused response comes back at once (or, after a network error, a {@link RetryBudgetExhaustedError}). Retries
   * of every cause count: statuses in `retryOn` and network errors. Only its two methods are called, so a budget
   * of your own making (shared through Redis, say) fits. Default: none.
   */
  retryBudget?: Pick<RetryBudget, 'recordRequest' | 'tryRetry'>
  /**
   * Adaptive throttling shared with other calls ({@link createAdaptiveThrottle}): it may refuse any attempt
   * locally, before sending it. A refused first attempt rejects with a {@link ThrottledError}; a refused retry
   * returns the refused response at once. A response with a status in `retryOn`, or a network error, counts as a
   * refusal by the server; any other response as an accept. Default: none.
   */
  throttle?: Pick<AdaptiveThrottle, 'admit' | 'record' | 'refusalProbability'>
}

/** The options of one call with their defaults applied, checked once. */
export interface Settings {
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
  retryBudget: PoliteFetchOptions['retryBudget']
  throttle: PoliteFetchOptions['throttle']
}

/** Applies the defaults and checks every option, throwing a {@link ClientOptionError} that names a bad one. */
export function resolveOptions(options: PoliteFetchOptions): Settings {
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
    retryBudget: options.retryBudget,
    throttle: options.throttle,
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
  // By shape, not class: a budget or throttle of the user's own (one shared through Redis, say) is welcome.
  if (settings.retryBudget !== undefined && !hasMethods(settings.retryBudget, ['recordRequest', 'tryRetry'])) {
    invalidOption('retryBudget', 'must be a RetryBudget (see createRetryBudget)', options.retryBudget)
  }
  if (settings.throttle !== undefined && !hasMethods(settings.throttle, ['admit', 'record', 'refusalProbability'])) {
    invalidOption('throttle', 'must be an AdaptiveThrottle (see createAdaptiveThrottle)', options.throttle)
  }
  return settings
}

function hasMethods(value: unknown, names: readonly string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  )
}
