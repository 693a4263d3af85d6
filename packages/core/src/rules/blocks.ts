import type { Step } from '../algorithms'
import type { CompiledRule } from './rules'

/**
 * A rule's step while its key is blocked until `blockedUntil` (a lockout, the rule's `block` option): refused,
 * nothing remaining, and the wait is the rest of the block, or longer when the rule itself would still refuse the
 * request then. `step` is the rule's own uncharged view at the same instant; the state is kept as it is.
 *
 * @example
 * const step = blockedStep(slidingWindow(state, now, 1, rule, false), now, blockedUntil)
 */
export function blockedStep(step: Step<unknown>, now: number, blockedUntil: number): Step<unknown> {
  const blockLeft = blockedUntil - now
  return {
    state: step.state,
    allowed: false,
    remaining: 0,
    resetMs: Math.max(blockLeft, step.resetMs),
    retryAfterMs: Math.max(blockLeft, step.allowed ? 0 : step.retryAfterMs),
    delayMs: 0,
    aheadMs: step.aheadMs ?? 0,
  }
}

/**
 * Whether a key whose block ends at `blockedUntil` (undefined: none recorded) is blocked at `now`.
 *
 * @example
 * if (isBlocked(blockedUntil, now)) reject()
 */
export function isBlocked(blockedUntil: number | undefined, now: number): blockedUntil is number {
  return blockedUntil !== undefined && blockedUntil > now
}

/**
 * Whether a charged request that `rule` rejected with `step` starts a block of the key: the rule has a `block`,
 * and the key was not blocked already (a request during a block does not extend it).
 *
 * @example
 * if (startsBlock(rule, step, charge, wasBlocked)) blockedUntil[i] = now + rule.blockMs
 */
export function startsBlock(rule: CompiledRule, step: Step<unknown>, charge: boolean, wasBlocked: boolean): boolean {
  return charge && rule.blockMs > 0 && !step.allowed && !wasBlocked
}
