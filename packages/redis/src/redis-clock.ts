/**
 * This instance's view of the Redis clock, so that each script call can carry the latest Redis time it may run at
 * (see main.lua, 'SLUICELATE'). A call the store gave up on can still reach Redis later: a client follows a MOVED
 * from a master that was hung and came back, resends after a reconnect, or Redis itself resumes after a stall and
 * reads what waited in its socket. Past its deadline the script changes nothing, so such a call is never charged.
 *
 * The deadline is `lateMs` (the store's backstop: no call waits longer) after the send, in Redis's clock. Each reply
 * says when Redis ran the call; that Redis time less this instance's monotonic time at the send is never below the
 * true offset between the clocks (Redis ran the call after it was sent), so the smallest such sample is the closest
 * safe estimate: a deadline is never earlier than meant. Samples are kept for a second at most, so that a Redis clock
 * that steps is followed; a step forward larger than `lateMs` in between is caught when a reply that came back
 * within `lateMs` says late (see {@link RedisClock.wasStep}), and that call is sent again without a deadline.
 *
 * @example
 * const clock = new RedisClock(3000)
 * clock.notAfter(performance.now()) // '' until a reply has been seen
 * clock.sample(redisNowFromReply, sentAt)
 * clock.notAfter(performance.now()) // the Redis time, in ms, after which the call must change nothing
 */
export class RedisClock {
  /** The smallest (Redis time at a call) less (performance.now() at its send) seen lately; NaN before any. */
  private offsetMs = Number.NaN
  /** When that sample's call was sent. */
  private offsetAt = Number.NEGATIVE_INFINITY

  constructor(
    /** How long after its send a call may still be run by Redis. */
    readonly lateMs: number,
  ) {}

  /** A reply to a call sent at `sentAt` (performance.now()) said Redis ran it at `redisMs` (Redis's clock, ms). */
  sample(redisMs: number, sentAt: number): void {
    const offsetMs = redisMs - sentAt
    if (!(offsetMs >= this.offsetMs) || sentAt - this.offsetAt > SAMPLE_LIFETIME_MS) {
      this.offsetMs = offsetMs
      this.offsetAt = sentAt
    }
  }

  /** The Redis time after which a call sent at `sentAt` must change nothing, or '' while the clock is unknown. */
  notAfter(sentAt: number): number | '' {
    const offsetMs = this.offsetMs
    return Number.isNaN(offsetMs) ? '' : Math.ceil(sentAt + offsetMs + this.lateMs)
  }

  /**
   * Whether a call sent at `sentAt` that Redis refused as late at `redisMs`, and whose reply is here at `repliedAt`,
   * was refused because the clocks moved rather than because it was late: its reply came back within `lateMs`, so
   * Redis ran it in time. Then that refusal is the sample from now on. (A call that was truly late says nothing about
   * the clocks: it waited somewhere for an unknown time.)
   */
  wasStep(redisMs: number, sentAt: number, repliedAt: number): boolean {
    if (repliedAt - sentAt >= this.lateMs) return false
    this.offsetMs = redisMs - sentAt
    this.offsetAt = sentAt
    return true
  }
}

/** How long the smallest sample is trusted before a newer one replaces it, larger or not. */
const SAMPLE_LIFETIME_MS = 1000
