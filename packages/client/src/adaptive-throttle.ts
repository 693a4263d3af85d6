import { invalidOption } from './errors'
import { DEFAULT_MAX_KEYS, type KeyCount, originKey, PerKey, SlidingCount, type TargetKey } from './sliding-window'

/** Options of {@link createAdaptiveThrottle}. Every one is optional; the defaults are given with each. */
export interface AdaptiveThrottleOptions {
  /**
   * `K` in the formula: how many requests the client may send per request the server accepts before it starts
   * refusing locally. At least 1; lower refuses sooner. Default 2.
   */
  k?: number
  /** The sliding span over which requests and accepts are counted, in ms. Default 120 000 (two minutes). */
  windowMs?: number
  /** Which requests share a throttle. Default: one per origin; `() => 'all'` makes one for every origin. */
  key?: TargetKey
  /**
   * The most keys (origins, with the default `key`) it keeps state for at once; past it the least recently used is
   * forgotten. Default 1000 (under 2 KB each).
   */
  maxKeys?: number
  /** A uniform random number in [0, 1), for the draw. Default `Math.random`. */
  random?: () => number
  /** The time in ms. Default `Date.now`; inject one in tests. */
  clock?: () => number
}

/** What an {@link AdaptiveThrottle} has counted since it was made, over all its keys: for metrics. */
export interface AdaptiveThrottleCounters {
  /** Requests sent (their outcome recorded). */
  readonly requests: number
  /** Requests the server accepted. */
  readonly accepts: number
  /** Requests refused locally, never sent. */
  readonly refusedLocally: number
}

/**
 * Adaptive client-side throttling, shared by every request given to it. {@link politeFetch} calls it itself;
 * around another client, call it yourself.
 *
 * @example
 * if (!throttle.admit(url)) throw new Error('refused locally: the server is refusing most work')
 * const res = await undici.request(url)
 * throttle.record(url, res.statusCode !== 429 && res.statusCode !== 503)
 */
export interface AdaptiveThrottle {
  /** Whether to send a request to `target` now; `false` (drawn with the refusal probability) means refuse it locally. */
  admit(target: string | URL): boolean
  /** Records a request that was sent and whether the server accepted it (a refusal is a 429, a 503, no answer). */
  record(target: string | URL, accepted: boolean): void
  /** The probability that `admit` refuses a request to `target` now. */
  refusalProbability(target: string | URL): number
  readonly counters: AdaptiveThrottleCounters
}

// One slice a second over the default two minutes.
const SLICES = 120

/**
 * Adaptive client-side throttling (Google's SRE book, "Handling Overload"): over the last `windowMs` (two minutes)
 * the client counts the requests it sent and those the server accepted, and refuses a new request locally, before
 * sending it, with probability
 *
 *     max(0, (requests - K * accepts) / (requests + 1))
 *
 * So a server that refuses most work stops receiving it from this client, and one that accepts again is sent more
 * with each accept. Up to K requests per accept go out untouched (K = 2: the server refuses half of them before
 * anything happens); the + 1 keeps a trickle going, which is how the client learns of a recovery.
 *
 * `requests` counts the requests sent, not those refused locally: the SRE book counts both, which keeps a client
 * refusing for minutes after a full outage ends, because refusals it made during the outage stay in the window
 * while accepts grow only at the trickle it still sends.
 *
 * @example
 * const throttle = createAdaptiveThrottle()
 * const fetchPolitely = createPoliteFetch({ throttle })
 * try { await fetchPolitely(url) } catch (err) {
 *   if (err instanceof ThrottledError) serveFromCache()
 * }
 */
export function createAdaptiveThrottle(options: AdaptiveThrottleOptions = {}): AdaptiveThrottle & KeyCount {
  const k = options.k ?? 2
  const windowMs = options.windowMs ?? 120_000
  const key = options.key ?? originKey
  const random = options.random ?? Math.random
  const clock = options.clock ?? Date.now
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS
  if (typeof k !== 'number' || !Number.isFinite(k) || k < 1) {
    invalidOption('k', 'must be a finite number >= 1 (requests sent per request accepted)', options.k)
  }
  if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs <= 0) {
    invalidOption('windowMs', 'must be a finite number of ms > 0', options.windowMs)
  }
  if (typeof maxKeys !== 'number' || !Number.isInteger(maxKeys) || maxKeys < 1) {
    invalidOption('maxKeys', 'must be a whole number >= 1 (keys held at once)', options.maxKeys)
  }
  for (const name of ['key', 'random', 'clock'] as const) {
    if (typeof options[name] !== 'undefined' && typeof options[name] !== 'function') {
      invalidOption(name, 'must be a function', options[name])
    }
  }

  const windows = new PerKey(windowMs, maxKeys, () => ({
    requests: new SlidingCount(windowMs, SLICES),
    accepts: new SlidingCount(windowMs, SLICES),
  }))
  const counters = { requests: 0, accepts: 0, refusedLocally: 0 }
  const probability = (target: string | URL, nowMs: number) => {
    const window = windows.get(key(target), nowMs)
    const requests = window.requests.count(nowMs)
    return Math.max(0, (requests - k * window.accepts.count(nowMs)) / (requests + 1))
  }

  return {
    admit(target) {
      const p = probability(target, clock())
      if (p > 0 && random() < p) {
        counters.refusedLocally++
        return false
      }
      return true
    },
    record(target, accepted) {
      const nowMs = clock()
      const window = windows.get(key(target), nowMs)
      window.requests.add(nowMs)
      counters.requests++
      if (accepted) {
        window.accepts.add(nowMs)
        counters.accepts++
      }
    },
    refusalProbability(target) {
      return probability(target, clock())
    },
    get counters(): AdaptiveThrottleCounters {
      return { ...counters }
    },
    get size(): number {
      return windows.size
    },
  }
}
