/**
 * A count of events over the last `windowMs`, kept in `slices` equal slices so that its memory does not grow with
 * the rate: the count covers the current slice and the `slices - 1` before it, between (1 - 1/slices) and 1 times
 * the window. Adding and counting are O(1), amortized over the slices that time has moved past. A slice counts whole
 * events in 32 bits (4 bytes, not a double's 8): a retry budget's or a throttle's state per origin is two counts, and
 * with doubles it took 2.4 and 2.7 KB an origin, past the 2 KB the README promises.
 */
export class SlidingCount {
  private readonly counts: Uint32Array
  private readonly sliceMs: number
  private latestSlice = Number.NEGATIVE_INFINITY
  private total = 0

  constructor(windowMs: number, slices: number) {
    this.counts = new Uint32Array(slices)
    this.sliceMs = windowMs / slices
  }

  /** Counts `amount` events (a whole number) at `nowMs`. */
  add(nowMs: number, amount = 1): void {
    this.moveTo(nowMs)
    const slice = Math.floor(nowMs / this.sliceMs)
    // A clock that stepped back more than a window lands in the current slice rather than nowhere.
    const index = slice > this.latestSlice - this.counts.length ? slice : this.latestSlice
    this.counts[this.slot(index)]! += amount
    this.total += amount
  }

  count(nowMs: number): number {
    this.moveTo(nowMs)
    return this.total
  }

  /** Clears the slices that `nowMs` has left behind. */
  private moveTo(nowMs: number): void {
    const slice = Math.floor(nowMs / this.sliceMs)
    if (slice <= this.latestSlice) return
    // The slices from the one after the latest up to this one start empty; their slots held slices a window ago.
    const passed = Math.min(slice - this.latestSlice, this.counts.length)
    for (let s = slice - passed + 1; s <= slice; s++) {
      const slot = this.slot(s)
      this.total -= this.counts[slot]!
      this.counts[slot] = 0
    }
    this.latestSlice = slice
    // Sums of many small float removals drift; an empty window is exactly zero.
    if (passed === this.counts.length) this.total = 0
  }

  private slot(slice: number): number {
    const n = this.counts.length
    return ((slice % n) + n) % n
  }
}

/** How a shared budget or throttle groups requests: by default one group per origin (scheme, host and port). */
export type TargetKey = (target: string | URL) => string

/**
 * The origin of an absolute URL (`https://api.example.com`); any other string is its own key, so a budget can guard
 * something that is not an HTTP request (`budget.tryRetry('payments-db')`).
 */
export const originKey: TargetKey = function originKey(target) {
  if (typeof target !== 'string') return target.origin
  try {
    return new URL(target).origin
  } catch {
    return target
  }
}

/**
 * The most keys (origins) a retry budget or a throttle keeps state for, by default: about 2 MB each at the most.
 * A client that talks to more origins at once than this forgets the least recently used.
 */
export const DEFAULT_MAX_KEYS = 1000

/**
 * What the budget and the throttle this package makes tell of their memory (one of your own need not).
 *
 * @example
 * const budget = createRetryBudget({ maxKeys: 500 })
 * budget.size // origins it keeps state for now: at most 500
 */
export interface KeyCount {
  /** How many keys (origins) it keeps state for now: at most its `maxKeys`. */
  readonly size: number
}

/**
 * State kept per key, forgotten once a key has been idle for `idleMs`, and bounded by `maxKeys`, past which the least
 * recently used key is forgotten: a client that talks to many origins holds state only for the `maxKeys` it used
 * last. Without the bound, 50,000 origins within one window held 336 MiB. The sweep runs at most once per `idleMs`.
 */
export class PerKey<State> {
  // A Map iterates in insertion order, and a key used again is inserted again: the first key is the least recent.
  private readonly states = new Map<string, { state: State; lastUsedMs: number }>()
  private lastSweepMs = Number.NEGATIVE_INFINITY

  constructor(
    private readonly idleMs: number,
    private readonly maxKeys: number,
    private readonly create: () => State,
  ) {}

  get(key: string, nowMs: number): State {
    if (nowMs - this.lastSweepMs >= this.idleMs) this.sweep(nowMs)
    const { states } = this
    let entry = states.get(key)
    if (entry === undefined) {
      if (states.size >= this.maxKeys) states.delete(states.keys().next().value as string)
      entry = { state: this.create(), lastUsedMs: nowMs }
    } else {
      states.delete(key)
    }
    states.set(key, entry)
    entry.lastUsedMs = nowMs
    return entry.state
  }

  get size(): number {
    return this.states.size
  }

  private sweep(nowMs: number): void {
    this.lastSweepMs = nowMs
    for (const [key, entry] of this.states) {
      if (nowMs - entry.lastUsedMs >= this.idleMs) this.states.delete(key)
    }
  }
}
