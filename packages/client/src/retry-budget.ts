import { invalidOption } from './errors'
import { DEFAULT_MAX_KEYS, type KeyCount, originKey, PerKey, SlidingCount, type TargetKey } from './sliding-window'

/** Options of {@link createRetryBudget}. Every one is optional; the defaults are given with each. */
export interface RetryBudgetOptions {
  /**
   * The share of first attempts that retries may add, in [0, 1]: in any `windowMs`, retries stay within this share
   * of the first attempts made in it (rounded down: 10% of 15 first attempts allows one retry). Default 0.1.
   */
  retryRatio?: number
  /**
   * The floor, so that a quiet client can still retry: whatever `retryRatio` allows, a retry is granted when the
   * last one was at least 1 / `minRetriesPerSecond` seconds ago. 0 turns the floor off. Default 0.2 (one retry in
   * any 5 s).
   */
  minRetriesPerSecond?: number
  /** The sliding span over which retries and first attempts are counted, in ms. Default 1000. */
  windowMs?: number
  /**
   * Which requests share a budget. Default: one budget per origin (`https://api.example.com`); a string that is
   * not a URL is its own key. `() => 'all'` makes one budget for every origin.
   */
  key?: TargetKey
  /**
   * The most keys (origins, with the default `key`) it keeps state for at once; past it the least recently used is
   * forgotten. Default 1000 (under 2 KB each).
   */
  maxKeys?: number
  /** The time in ms. Default `Date.now`; inject one in tests. */
  clock?: () => number
}

/** What a {@link RetryBudget} has counted since it was made, over all its keys: for metrics. */
export interface RetryBudgetCounters {
  /** First attempts recorded. */
  readonly requests: number
  /** Retries granted. */
  readonly retries: number
  /** Retries refused because the budget was spent. */
  readonly refusedLocally: number
}

/**
 * A retry budget, shared by every request given to it. {@link politeFetch} calls both methods itself; around
 * another client, call them yourself.
 *
 * @example
 * budget.recordRequest(url)
 * let res = await got(url, { throwHttpErrors: false, retry: { limit: 0 } })
 * if (res.statusCode === 503 && budget.tryRetry(url)) res = await got(url, { throwHttpErrors: false })
 */
export interface RetryBudget {
  /** Counts a first attempt to `target` (a URL, or any key), made now. */
  recordRequest(target: string | URL): void
  /** Asks to retry a request to `target` now: `true` grants the retry and counts it, `false` means do not send it. */
  tryRetry(target: string | URL): boolean
  readonly counters: RetryBudgetCounters
}

// 100 slices: the counted span is between 99% and 100% of the window, whatever its length.
const SLICES = 100

/**
 * A retry budget: the retries of all the requests given to it, together, may add at most `retryRatio` (10%) to
 * their first attempts, counted over a sliding `windowMs` (1 s), with a floor of one retry in any 5 s so that a
 * quiet client can still retry. A retry without budget is not sent. Backoff and `maxAttempts` make one request
 * polite; a budget bounds what a whole client adds when every request fails at once: with a budget, a crowd
 * of clients sends at most 1.1 times its usual load to a failing server, instead of up to `maxAttempts` times.
 *
 * Pass one budget to many {@link politeFetch} calls (`retryBudget` option); around another client, call
 * `recordRequest` before each first attempt and `tryRetry` before each retry.
 *
 * @example
 * const budget = createRetryBudget()
 * const fetchPolitely = createPoliteFetch({ retryBudget: budget })
 * const res = await fetchPolitely('https://api.example.com/things')
 * metrics.gauge('retries_refused', budget.counters.refusedLocally)
 */
export function createRetryBudget(options: RetryBudgetOptions = {}): RetryBudget & KeyCount {
  const retryRatio = options.retryRatio ?? 0.1
  const minRetriesPerSecond = options.minRetriesPerSecond ?? 0.2
  const windowMs = options.windowMs ?? 1000
  const key = options.key ?? originKey
  const clock = options.clock ?? Date.now
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS
  if (typeof retryRatio !== 'number' || !(retryRatio >= 0 && retryRatio <= 1)) {
    invalidOption('retryRatio', 'must be a share of first attempts in [0, 1], such as 0.1', options.retryRatio)
  }
  if (typeof minRetriesPerSecond !== 'number' || !Number.isFinite(minRetriesPerSecond) || minRetriesPerSecond < 0) {
    invalidOption('minRetriesPerSecond', 'must be a finite number >= 0', options.minRetriesPerSecond)
  }
  if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs <= 0) {
    invalidOption('windowMs', 'must be a finite number of ms > 0', options.windowMs)
  }
  if (typeof maxKeys !== 'number' || !Number.isInteger(maxKeys) || maxKeys < 1) {
    invalidOption('maxKeys', 'must be a whole number >= 1 (keys held at once)', options.maxKeys)
  }
  for (const name of ['key', 'clock'] as const) {
    if (typeof options[name] !== 'undefined' && typeof options[name] !== 'function') {
      invalidOption(name, 'must be a function', options[name])
    }
  }

  const floorGapMs = minRetriesPerSecond > 0 ? 1000 / minRetriesPerSecond : Number.POSITIVE_INFINITY
  // A key's state outlives its window while the floor still remembers its last retry.
  const idleMs = Math.max(windowMs, Number.isFinite(floorGapMs) ? floorGapMs : 0)
  const budgets = new PerKey(idleMs, maxKeys, () => ({
    firstAttempts: new SlidingCount(windowMs, SLICES),
    retries: new SlidingCount(windowMs, SLICES),
    lastRetryMs: Number.NEGATIVE_INFINITY,
  }))
  const counters = { requests: 0, retries: 0, refusedLocally: 0 }

  return {
    recordRequest(target) {
      const nowMs = clock()
      budgets.get(key(target), nowMs).firstAttempts.add(nowMs)
      counters.requests++
    },
    tryRetry(target) {
      const nowMs = clock()
      const budget = budgets.get(key(target), nowMs)
      // The epsilon keeps 0.1 * 30 = 3.0000000000000004 from refusing a third retry that 10% allows.
      const withinShare = budget.retries.count(nowMs) + 1 <= retryRatio * budget.firstAttempts.count(nowMs) + 1e-9
      const floor = minRetriesPerSecond > 0 && nowMs - budget.lastRetryMs >= floorGapMs
      if (!withinShare && !floor) {
        counters.refusedLocally++
        return false
      }
      budget.retries.add(nowMs)
      budget.lastRetryMs = nowMs
      counters.retries++
      return true
    },
    get counters(): RetryBudgetCounters {
      return { ...counters }
    },
    get size(): number {
      return budgets.size
    },
  }
}
