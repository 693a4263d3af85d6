import { algorithms, type Step } from '../algorithms'
import type { DecisionTrace, EventKeys } from '../events/event-types'
import { blockedStep, isBlocked, startsBlock } from '../limiter/blocks'
import type { Decision } from '../limiter/decision'
import type { CompiledRule } from '../limiter/rules'
import { warnOnce } from '../util/diagnostics'
import type { Logger } from '../util/logger'

/**
 * What a store computes for one rule: the algorithm's verdict without the state.
 *
 * @example
 * const outcome: Outcome = { allowed: true, remaining: 4, resetMs: 60_000, retryAfterMs: 0, delayMs: 0 }
 */
export interface Outcome {
  readonly allowed: boolean
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterMs: number
  readonly delayMs: number
}

/**
 * What happens when a store cannot decide: `'local'` decides from a per-instance stand-in (RedisStore only),
 * `'open'` admits, `'closed'` refuses (the HTTP adapters answer 503).
 *
 * @example
 * const policy: FailurePolicy = process.env.NODE_ENV === 'production' ? 'local' : 'closed'
 */
export type FailurePolicy = 'local' | 'open' | 'closed'

/**
 * What a limiter tells a store when it binds its rules.
 *
 * @example
 * const bound = store.bind(rules, { logger: console })
 */
export interface BindOptions {
  /** Where the store reports what it notices about this binding (another binding counting in the same key space). */
  readonly logger?: Logger
  /**
   * True when a limiter binds its own rules again with other limits (`withLimits`): the key spaces are the ones it
   * bound first, shared on purpose, so the store must not report them as shared with another limiter.
   */
  readonly variant?: boolean
  /**
   * How the store may show this binding's keys in what it reports (a `StoreKeyError`, a log line): `'hash'` (the
   * default) by their `keyHash` only, `'raw'` as they are. The limiter's `eventKeys` option.
   */
  readonly eventKeys?: EventKeys
}

/**
 * Holds the state of every key. A limiter binds its rules once, at construction, and calls the bound store on every
 * request: whatever depends only on the rules (plans, key prefixes, tables, scripts) is worked out in `bind`.
 * `MemoryStore` is the default; `RedisStore` from `@sluice/redis` shares the state between instances.
 *
 * @example
 * class CountingStore implements Store {
 *   calls = 0
 *   constructor(private readonly inner: Store) {}
 *   bind(rules: readonly CompiledRule[], options?: BindOptions): BoundStore {
 *     const bound = this.inner.bind(rules, options)
 *     return { rules, apply: (keys, cost, charge) => (this.calls++, bound.apply(keys, cost, charge)),
 *       refund: (keys, cost) => bound.refund(keys, cost), reset: (keys) => bound.reset(keys) }
 *   }
 * }
 */
export interface Store {
  bind(rules: readonly CompiledRule[], options?: BindOptions): BoundStore
}

/**
 * A store bound to one limiter's rules. `keys[i]` belongs to `rules[i]`.
 *
 * @example
 * const bound = new MemoryStore().bind(createLimiter({ limit: 5, window: '1s' }).rules)
 * const decision = await bound.apply(['user:42'], 1, true)
 */
export interface BoundStore {
  readonly rules: readonly CompiledRule[]
  /**
   * Applies every rule to its key at one instant, all or nothing: when `charge` is true and every rule admits, each
   * key is charged `cost`; when any rule rejects (or `charge` is false, a peek), no key changes. Answers the
   * Decision, built from the rules' outcomes with `decisionOf`, so a store that decides without I/O costs its caller
   * one promise and no more. `cost` is a positive whole number no larger than any rule's limit. `trace` is given
   * only while someone listens on `sluice:decision`: a store whose answer did not come from its own state (a
   * short-circuit, a fallback) says so in it.
   */
  apply(keys: readonly string[], cost: number, charge: boolean, trace?: DecisionTrace): Promise<Decision>
  /**
   * Gives `cost` back to each key, after a charged request that should not count (see the algorithms' `Refund`).
   * Each key is refunded on its own; a refund never goes below a new key's state.
   */
  refund(keys: readonly string[], cost: number): Promise<void>
  /** Forgets the state of each key. */
  reset(keys: readonly string[]): Promise<void>
}

/**
 * The key spaces bound on one store. Two limiters that count in the same key space (the same prefix, rule name and
 * algorithm) on one store share their counts, silently; a store says so when the second one binds, once per key
 * space (a limiter built per request would otherwise log on every request).
 *
 * @example
 * private readonly keySpaces = new KeySpaces()
 * bind(rules: readonly CompiledRule[], options: BindOptions = {}) {
 *   this.keySpaces.claim(rules, options)
 * }
 */
export class KeySpaces {
  private readonly bound = new Set<string>()
  private readonly reported = new Set<string>()

  claim(rules: readonly CompiledRule[], options: BindOptions = {}): void {
    if (options.variant === true) return
    const logger = options.logger ?? console
    for (const rule of rules) {
      if (this.bound.has(rule.keySpace) && !this.reported.has(rule.keySpace)) {
        this.reported.add(rule.keySpace)
        warnOnce(
          logger,
          'SLUICE_SHARED_KEY_SPACE',
          `sluice: another limiter on this store already counts under "${rule.prefix}:${rule.name}", so the two ` +
            'share their counts. Give each its own `name` or `prefix`, or use one limiter in both places.',
          rule.keySpace,
        )
      }
      this.bound.add(rule.keySpace)
    }
  }
}

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
