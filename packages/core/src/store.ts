import { algorithms, type Step } from './algorithms'
import type { CompiledRule } from './rules'

/**
 * What a store reports for one rule: the algorithm's verdict without the state.
 *
 * @example
 * const outcomes: readonly Outcome[] = await store.apply(rules, ['user:1'], 1, true)
 */
export interface Outcome {
  readonly allowed: boolean
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly delayMs: number
}

/**
 * Holds the state of every key and applies the algorithms to it atomically. `MemoryStore` is the default;
 * `RedisStore` from `@sluice/redis` shares the state between instances.
 *
 * A store applies all the rules of one request at one instant, all or nothing: when `charge` is true and every
 * rule admits, each rule's key is charged `cost`; when any rule rejects, no key changes. `keys[i]` belongs to
 * `rules[i]`. The outcomes come back in the order of the rules.
 *
 * @example
 * class LoggingStore implements Store {
 *   constructor(private readonly inner: Store) {}
 *   apply(rules: readonly CompiledRule[], keys: readonly string[], cost: number, charge: boolean) {
 *     console.log('apply', keys)
 *     return this.inner.apply(rules, keys, cost, charge)
 *   }
 *   refund(rules: readonly CompiledRule[], keys: readonly string[], cost: number) {
 *     return this.inner.refund(rules, keys, cost)
 *   }
 *   reset(rules: readonly CompiledRule[], keys: readonly string[]) { return this.inner.reset(rules, keys) }
 * }
 */
export interface Store {
  apply(
    rules: readonly CompiledRule[],
    keys: readonly string[],
    cost: number,
    charge: boolean,
  ): readonly Outcome[] | Promise<readonly Outcome[]>
  /**
   * Optional fast path for a single rule: the same as `apply([rule], [key], cost, charge)[0]`, without the arrays.
   */
  applyOne?(rule: CompiledRule, key: string, cost: number, charge: boolean): Outcome | Promise<Outcome>
  /**
   * Gives `cost` back to `keys[i]` under every `rules[i]`, after a charged request that should not count
   * (see the algorithms' `Refund`). Each key is refunded on its own; a refund never goes below a new key's state.
   */
  refund(rules: readonly CompiledRule[], keys: readonly string[], cost: number): void | Promise<void>
  /** Forgets the state of `keys[i]` under `rules[i]`. */
  reset(rules: readonly CompiledRule[], keys: readonly string[]): void | Promise<void>
}

/**
 * Runs every rule's algorithm on its state at one instant, all or nothing. When one rule rejects a charged
 * request, the rules that would have admitted it report their uncharged view instead, since nothing is charged.
 * The caller writes the new states back only when `committed(steps, charge)` is true.
 *
 * @example
 * const steps = evaluateRules(rules, [stateA, stateB], Date.now(), 1, true)
 * if (committed(steps, true)) save(steps.map((s) => s.state))
 */
export function evaluateRules(
  rules: readonly CompiledRule[],
  states: readonly unknown[],
  now: number,
  cost: number,
  charge: boolean,
): Step<unknown>[] {
  const steps: Step<unknown>[] = []
  let rejected = false
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as CompiledRule
    const step = algorithms[rule.algorithm](states[i], now, cost, rule, charge)
    if (!step.allowed) rejected = true
    steps.push(step)
  }
  if (rejected && charge) {
    for (let i = 0; i < rules.length; i++) {
      if ((steps[i] as Step<unknown>).allowed) {
        const rule = rules[i] as CompiledRule
        steps[i] = algorithms[rule.algorithm](states[i], now, cost, rule, false)
      }
    }
  }
  return steps
}

/**
 * Whether the steps of one request charged every rule (and so must all be written back).
 *
 * @example
 * if (committed(steps, true)) for (const step of steps) save(step.state)
 */
export function committed(steps: readonly Step<unknown>[], charge: boolean): boolean {
  if (!charge) return false
  for (const step of steps) if (!step.allowed) return false
  return true
}
