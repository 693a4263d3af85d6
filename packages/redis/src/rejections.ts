import type { Outcome } from '@sluice/core/store'

interface Rejection {
  /** Local time until which the same rules and keys are rejected without asking Redis. */
  readonly until: number
  /** The smallest cost this rejection covers. */
  readonly cost: number
  /** Local time of the reply. */
  readonly at: number
  readonly outcomes: readonly Outcome[]
  /**
   * The binding whose rules rejected: a limiter with other limits (a plan) on the same keys may well admit, so
   * only the same binding takes the rejection as known.
   */
  readonly owner: object
}

/**
 * The local short-circuit: a request Redis rejected until T is rejected here, with no round trip, until T (by this
 * instance's clock at the time of the reply) for the same or a higher cost, so a flood from one key does not reach
 * Redis. Bounded to `maxKeys` rejections, the oldest dropped first; 0 turns it off.
 *
 * @example
 * const rejections = new Rejections(10_000, () => Date.now())
 * const known = rejections.known(redisKey, cost, binding) ?? rejections.remember(redisKey, cost, await askRedis(), binding)
 */
export class Rejections {
  private readonly rejected = new Map<string, Rejection>()

  constructor(
    private readonly maxKeys: number,
    private readonly now: () => number,
  ) {}

  /** The outcomes of a rejection still running for these keys (joined) and a cost it covers, aged to now. */
  known(keys: string, cost: number, owner: object): readonly Outcome[] | undefined {
    // Most of the time nothing is rejected: then a key is not even hashed.
    if (this.rejected.size === 0) return undefined
    const known = this.rejected.get(keys)
    if (known === undefined) return undefined
    const now = this.now()
    if (now >= known.until) {
      this.rejected.delete(keys)
      return undefined
    }
    if (cost < known.cost || known.owner !== owner) return undefined
    const elapsed = now - known.at
    return known.outcomes.map((outcome) => ({
      ...outcome,
      resetMs: Math.max(0, outcome.resetMs - elapsed),
      retryAfterMs: outcome.allowed ? 0 : Math.max(0, outcome.retryAfterMs - elapsed),
    }))
  }

  /** Takes in Redis's answer for these keys and cost: a rejection is remembered; any answer replaces what was known. */
  remember(keys: string, cost: number, outcomes: readonly Outcome[], owner: object): void {
    if (this.maxKeys === 0) return
    let wait = 0
    for (const outcome of outcomes) if (!outcome.allowed) wait = Math.max(wait, outcome.retryAfterMs)
    // A fresh answer replaces what was known; an admitted one (for example a smaller cost) ends the rejection.
    if (this.rejected.size > 0) this.rejected.delete(keys)
    if (wait <= 0 || !Number.isFinite(wait)) return
    if (this.rejected.size >= this.maxKeys) {
      const oldest = this.rejected.keys().next()
      if (!oldest.done) this.rejected.delete(oldest.value)
    }
    const now = this.now()
    // retryAfterMs is relative to the script's instant; counting it from the reply's arrival errs on the late side.
    this.rejected.set(keys, { until: now + wait, cost, at: now, outcomes, owner })
  }

  /** Forgets a rejection, after its keys were refunded or reset. */
  forget(keys: string): void {
    this.rejected.delete(keys)
  }

  clear(): void {
    this.rejected.clear()
  }
}
