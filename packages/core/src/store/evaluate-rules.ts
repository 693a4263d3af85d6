import { algorithms, type Step } from '../algorithms'
import { blockedStep, isBlocked, startsBlock } from '../rules/blocks'
import type { CompiledRule } from '../rules/rules'

/**
 * Runs every rule's algorithm on its state at one instant, all or nothing. When one rule rejects a charged
 * request, the rules that would have admitted it report their uncharged view instead, since nothing is charged.
 * The caller writes back each step whose `state` is not the one it gave: every rule's, when `committed(steps, charge)`
 * is true, and otherwise only states moved back to a clock that stepped back (see `Step`), which charge nothing.
 *
 * Blocks (rules with `block`): `blockedUntil[i]` is when the block of `keys[i]` under rule i ends (undefined: none
 * recorded). A blocked rule refuses (see `blockedStep`) without being charged. When a charged request is rejected,
 * each rule that rejected it and has a `block` starts one: its end is written into `blockedUntil[i]`, for the caller
 * to store whether or not anything was committed, and its step reports the block.
 *
 * @example
 * const steps = evaluateRules(rules, [stateA, stateB], Date.now(), 1, true)
 * steps.forEach((step, i) => { if (step.state !== [stateA, stateB][i]) save(i, step.state) })
 */
export function evaluateRules(
  rules: readonly CompiledRule[],
  states: readonly unknown[],
  now: number,
  cost: number,
  charge: boolean,
  blockedUntil?: (number | undefined)[],
): Step<unknown>[] {
  const steps: Step<unknown>[] = []
  let rejected = false
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as CompiledRule
    const until = blockedUntil?.[i]
    const blocked = isBlocked(until, now)
    let step = algorithms[rule.algorithm](states[i], now, cost, rule, charge && !blocked)
    if (blocked) step = blockedStep(step, now, until)
    if (!step.allowed) rejected = true
    steps.push(step)
  }
  if (rejected && charge) {
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i] as CompiledRule
      const step = steps[i] as Step<unknown>
      if (step.allowed) {
        steps[i] = algorithms[rule.algorithm](states[i], now, cost, rule, false)
      } else if (blockedUntil !== undefined && startsBlock(rule, step, charge, isBlocked(blockedUntil[i], now))) {
        blockedUntil[i] = now + rule.blockMs
        steps[i] = blockedStep(step, now, now + rule.blockMs)
      }
    }
  }
  return steps
}

/**
 * Whether the steps of one request charged every rule (and so every rule's new state must be written back).
 *
 * @example
 * if (committed(steps, true)) for (const step of steps) save(step.state)
 */
export function committed(steps: readonly Step<unknown>[], charge: boolean): boolean {
  if (!charge) return false
  for (const step of steps) if (!step.allowed) return false
  return true
}
