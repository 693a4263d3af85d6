/**
 * This instance's view of the Redis clock, so that each script call can carry the latest Redis time it may run at
 * (see main.lua, 'SLUICELATE'). A call the store gave up on can still reach Redis later: a client follows a MOVED
 * from a master that was hung and came back, resends after a reconnect, or Redis itself resumes after a stall and
 * reads what waited in its socket. Past its deadline the script changes nothing, so such a call is never charged.
 *
 * The deadline is `lateMs` (the store's backstop: no call waits longer) after the send, in Redis's clock, and never
 * later: the store gives a call up no sooner than `lateMs` after it made it, so a call Redis may still run is one the
 * store still waits for. Each reply says when Redis ran the call, and the call ran before its reply was read, so that
 * Redis time less this instance's monotonic time when the reply was read is never above the true offset between the
 * clocks: the largest such sample is the closest safe estimate. (The send side bounds the offset from above; a
 * deadline taken from it was late by as much as the sample's round trip, which on a starved instance is hundreds of ms,
 * and a call the store had given up on at its backstop was run and charged by a promoted replica within it.) An
 * estimate low by a round trip only makes a deadline that early: a call that Redis runs that late, and that is still
 * waited for, is sent again (see `Batches`). Samples are kept for a second at most, so that a Redis clock that steps is
 * followed; a step forward larger than `lateMs` in between is caught when a reply that came back within `lateMs` says
 * late (see {@link RedisClock.wasStep}), and that call is sent again without a deadline.
 *
 * @example
 * const clock = new RedisClock(3000)
 * clock.notAfter(performance.now()) // '' until a reply has been seen
 * clock.sample(redisNowFromReply, performance.now()) // when its reply was read
 * clock.notAfter(performance.now()) // the Redis time, in ms, after which the call must change nothing
 */
export class RedisClock {
  /** The largest (Redis time at a call) less (performance.now() when its reply was read) seen lately; NaN before any. */
  private offsetMs = Number.NaN
  /** When that sample's reply was read. */
  private offsetAt = Number.NEGATIVE_INFINITY

  constructor(
    /** How long after its send a call may still be run by Redis. */
    readonly lateMs: number,
  ) {}

  /** A reply read at `repliedAt` (performance.now()) said Redis ran its call at `redisMs` (Redis's clock, ms). */
  sample(redisMs: number, repliedAt: number): void {
    const offsetMs = redisMs - repliedAt
    if (!(offsetMs <= this.offsetMs) || repliedAt - this.offsetAt > SAMPLE_LIFETIME_MS) {
      this.offsetMs = offsetMs
      this.offsetAt = repliedAt
    }
  }

  /**
   * The Redis time after which a call made at `sentAt` must change nothing (no later than `lateMs` after it, by
   * Redis's clock), or '' while the clock is unknown.
   */
  notAfter(sentAt: number): number | '' {
    const offsetMs = this.offsetMs
    return Number.isNaN(offsetMs) ? '' : Math.floor(sentAt + offsetMs + this.lateMs)
  }

  /**
   * Whether a call sent at `sentAt` that Redis refused as late at `redisMs`, and whose reply is here at `repliedAt`,
   * was refused because the clocks moved rather than because it was late: its reply came back within `lateMs`, so
   * Redis ran it in time. Then that refusal is the sample from now on. (A call that was truly late says nothing about
   * the clocks: it waited somewhere for an unknown time.)
   */
  wasStep(redisMs: number, sentAt: number, repliedAt: number): boolean {
    if (repliedAt - sentAt >= this.lateMs) return false
    this.offsetMs = redisMs - repliedAt
    this.offsetAt = repliedAt
    return true
  }
}

/** How long the largest sample is trusted before a newer one replaces it, smaller or not. */
const SAMPLE_LIFETIME_MS = 1000
