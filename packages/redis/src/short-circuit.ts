import { type CompiledRule, floorDiv, type Outcome } from '@sluice/core/store'
import type { ScriptOutcome } from './batch'

interface Rejection {
  /** This instance's time when the call was sent: no later than the script's instant, whatever the round trip. */
  readonly at: number
  /** Until when (this instance's time) Redis's answer stands unchanged, unless something else reaches these keys. */
  readonly until: number
  /** The cost Redis answered for. */
  readonly cost: number
  /** The highest cost the same answer holds for (the cost itself, or more where no number depends on the cost). */
  readonly upToCost: number
  readonly outcomes: readonly Outcome[]
  /**
   * The binding whose rules rejected: a limiter with other limits (a plan) on the same keys may well admit, so
   * only the same binding takes the rejection as known.
   */
  readonly owner: object
  /** The Redis keys of the rules, whose every other call forgets this rejection. */
  readonly redisKeys: readonly string[]
}

/**
 * The local short-circuit: a request Redis rejected is answered here, with no round trip, for as long as Redis's own
 * answer is known to be the same, number for number, so a flood from one key does not reach Redis. That holds while
 * nothing else reaches these keys and, for every rule of the request:
 * - a rule that refused while its key is blocked (`block`): until the block ends (then a refusal would start another,
 *   a write only Redis may make);
 * - a rule that refused a cost of 1, or any cost in a fixed or calendar window: until its retry time (its remaining
 *   count cannot change before then); a rule with a block that refused unblocked, or a higher cost elsewhere, never
 *   (its remaining count may grow before its retry time);
 * - a rule that admitted: forever when its key is back to its full allowance, until the window's end for a fixed or
 *   calendar window, else never (tokens refill, an old window's weight fades).
 * The waits count down from the time the call was sent. Every other call of this instance on one of those keys (a
 * charge, a refund, a reset, by any binding) forgets the rejection; what other instances do is seen after `maxMs` at
 * the latest, when Redis is asked again. Bounded to `maxKeys` rejections, the oldest dropped first; 0 turns it off.
 *
 * @example
 * const shortCircuit = new ShortCircuit(10_000, 1000, () => Date.now())
 * const known = shortCircuit.known(redisKey, cost, binding)
 * if (known === undefined) shortCircuit.learn(redisKey, [redisKey], rules, cost, charge, await askRedis(), binding, sentAt)
 */
export class ShortCircuit {
  private readonly rejected = new Map<string, Rejection>()
  /** The rejections of several keys (stacked rules) by each of their keys; a lone key's is under that key already. */
  private readonly byKey = new Map<string, Set<string>>()

  constructor(
    private readonly maxKeys: number,
    private readonly maxMs: number,
    private readonly now: () => number,
  ) {}

  /** The outcomes of a rejection still standing for these keys (joined) and this cost, aged to now. */
  known(keys: string, cost: number, owner: object): readonly Outcome[] | undefined {
    // Most of the time nothing is rejected: then a key is not even hashed.
    if (this.rejected.size === 0) return undefined
    const known = this.rejected.get(keys)
    if (known === undefined) return undefined
    const now = this.now()
    if (now >= known.until || now < known.at) {
      // Over, or the clock stepped back to before the call: Redis decides.
      this.drop(keys, known)
      return undefined
    }
    if (cost < known.cost || cost > known.upToCost || known.owner !== owner) return undefined
    const elapsed = now - known.at
    return known.outcomes.map((outcome) => ({
      ...outcome,
      resetMs: Math.max(0, outcome.resetMs - elapsed),
      retryAfterMs: outcome.allowed ? 0 : outcome.retryAfterMs - elapsed,
    }))
  }

  /**
   * Takes in Redis's answer for these keys (joined, and each), sent at `sentAt`: whatever was known about any of the
   * keys is forgotten (the call may have changed them), and a charged request's rejection is remembered for as long
   * as the same answer stands (see the class).
   */
  learn(
    keys: string,
    redisKeys: readonly string[],
    rules: readonly CompiledRule[],
    cost: number,
    charge: boolean,
    outcomes: readonly ScriptOutcome[],
    owner: object,
    sentAt: number,
  ): void {
    this.touched(redisKeys)
    // A peek starts no block where a charge would: only a charge's answer is the charge's.
    if (this.maxKeys === 0 || !charge) return
    const standsMs = Math.min(this.maxMs, standingMs(rules, outcomes, cost, sentAt))
    if (standsMs <= 0 || sentAt + standsMs <= this.now()) return
    if (this.rejected.size >= this.maxKeys) {
      const oldest = this.rejected.entries().next()
      if (!oldest.done) this.drop(oldest.value[0], oldest.value[1])
    }
    const upToCost = sameForHigherCosts(rules, outcomes) ? Math.min(...rules.map((rule) => rule.limit)) : cost
    this.rejected.set(keys, { at: sentAt, until: sentAt + standsMs, cost, upToCost, outcomes, owner, redisKeys })
    if (redisKeys.length > 1) {
      for (const key of redisKeys) {
        const joined = this.byKey.get(key)
        if (joined === undefined) this.byKey.set(key, new Set([keys]))
        else joined.add(keys)
      }
    }
  }

  /** Forgets every rejection that involves one of these Redis keys: a call of this instance changed or read them. */
  touched(redisKeys: readonly string[]): void {
    if (this.rejected.size === 0) return
    for (const key of redisKeys) {
      const alone = this.rejected.get(key)
      if (alone !== undefined) this.drop(key, alone)
      const joined = this.byKey.get(key)
      if (joined === undefined) continue
      for (const keys of joined) {
        const rejection = this.rejected.get(keys)
        if (rejection !== undefined) this.drop(keys, rejection)
      }
    }
  }

  clear(): void {
    this.rejected.clear()
    this.byKey.clear()
  }

  private drop(keys: string, rejection: Rejection): void {
    this.rejected.delete(keys)
    if (rejection.redisKeys.length === 1) return
    for (const key of rejection.redisKeys) {
      const joined = this.byKey.get(key)
      if (joined === undefined) continue
      joined.delete(keys)
      if (joined.size === 0) this.byKey.delete(key)
    }
  }
}

/**
 * For how long, in ms from the script's instant, Redis gives these outcomes again (counted down) to the same request
 * if nothing else reaches its keys, and no request of it writes anything; 0 when not at all (see `ShortCircuit`).
 */
function standingMs(
  rules: readonly CompiledRule[],
  outcomes: readonly ScriptOutcome[],
  cost: number,
  sentAt: number,
): number {
  let standing = Number.POSITIVE_INFINITY
  let refused = false
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as CompiledRule
    const outcome = outcomes[i] as ScriptOutcome
    // A cost that can never fit: the limiter answers that itself, and its waits are no instant to count down to.
    if (cost > rule.limit) return 0
    let ms: number
    if (!outcome.allowed) {
      refused = true
      // Blocked: nothing remaining, and both waits end at instants (the block's end, or the rule's own later one).
      if (outcome.blockLeftMs > 0) ms = outcome.blockLeftMs
      else if (rule.blockMs > 0) return 0
      else if (cost === 1 || countsWindows(rule)) ms = outcome.retryAfterMs
      else return 0
    } else if (outcome.resetMs === 0) {
      ms = Number.POSITIVE_INFINITY
    } else if (countsWindows(rule)) {
      ms = outcome.resetMs
    } else {
      return 0
    }
    // A window's numbers start again at its end, also under a block that lasts longer.
    if (countsWindows(rule)) ms = Math.min(ms, msToWindowEnd(rule, sentAt))
    standing = Math.min(standing, ms)
  }
  return refused ? standing : 0
}

/** From `at` to the end of the fixed or calendar window holding it (before the script's instant: never later). */
function msToWindowEnd(rule: CompiledRule, at: number): number {
  if (rule.calendar !== undefined) return rule.calendar.msUntilEnd(at)
  return (floorDiv(at, rule.windowMs) + 1) * rule.windowMs - at
}

/**
 * Whether a higher cost (up to the smallest limit) gets the same answer: every rule refused, each a fixed or calendar
 * window without a block, whose numbers do not depend on the cost.
 */
function sameForHigherCosts(rules: readonly CompiledRule[], outcomes: readonly ScriptOutcome[]): boolean {
  return rules.every((rule, i) => !outcomes[i]?.allowed && countsWindows(rule) && rule.blockMs === 0)
}

/** A fixed or calendar window: its numbers stay as they are within the window, and its waits end with the window. */
function countsWindows(rule: CompiledRule): boolean {
  return rule.algorithm === 'fixed-window' || rule.algorithm === 'calendar-window'
}
