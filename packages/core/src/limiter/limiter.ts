import type { AlgorithmName } from '../algorithms'
import { type DecisionContext, observeDecision, observed } from '../events/events'
import { type Decision, neverFits } from '../rules/decision'
import type { LimiterFields } from '../rules/fields'
import { type CompiledRule, queueRule } from '../rules/rules'
import { MemoryStore } from '../store/memory-store'
import type { BoundStore, DecisionTrace, Store } from '../store/store'
import { checkObject, checkOneOf, checkWholeNumber, isCost } from '../util/checks'
import { brandError, describe, InvalidOptionError } from '../util/errors'
import { checkLogger } from '../util/logger'
import { sleep } from '../util/sleep'
import type { LimiterOptions } from './options'
import { compileRules, ruleSources } from './rule-sources'
import { type RuleLimits, Variants } from './variants'

export type { Decision, RuleDecision } from '../rules/decision'
export type { LimiterOptions } from './options'
export type { RuleLimits } from './variants'

/**
 * A limiter: `createLimiter` returns one.
 *
 * @example
 * const limiter: Limiter = createLimiter({ limit: 5, window: '1s' })
 * await limiter.consume('k'); await limiter.peek('k'); await limiter.reset('k')
 */
export interface Limiter {
  /** The compiled rules, in order. */
  readonly rules: readonly CompiledRule[]
  readonly store: Store
  /**
   * Asks to admit a request of `cost` (default: the limiter's `cost`, 1) for `key`, and charges it if admitted.
   * With several rules, give one key per rule, or one key for all of them.
   */
  consume(key: string | readonly string[], cost?: number): Promise<Decision>
  /** The decision `consume` would make now, without charging anything. */
  peek(key: string | readonly string[], cost?: number): Promise<Decision>
  /**
   * Gives `cost` back to the key under every rule, for a request that was admitted but should not count
   * (the HTTP adapters' `refund` option calls it after the response).
   */
  refund(key: string | readonly string[], cost?: number): Promise<void>
  /** Forgets the key's state under every rule (and its queue). */
  reset(key: string | readonly string[]): Promise<void>
  /**
   * The leaky bucket as a queue, without waiting: takes a place in the queue and returns at once with the decision;
   * an admitted request may depart after `delayMs`. `schedule` is `enqueue` followed by that wait.
   */
  enqueue(key: string | readonly string[], cost?: number): Promise<Decision>
  /**
   * The leaky bucket as a queue: resolves when the request may go (after `delayMs`), or rejects at once with a
   * {@link RateLimitError} when the queue is full. Every rule must use `'leaky-bucket'`. An abort stops the wait;
   * the request keeps its place in the queue, as it would in a real queue that has already accepted it.
   */
  schedule(key: string | readonly string[], cost?: number, options?: { signal?: AbortSignal }): Promise<Decision>
  /**
   * This limiter with other limits, for plans: the same rules, keys and store, so a key whose limit changes keeps
   * what it has used. Give one {@link RuleLimits} per rule (undefined keeps a rule's), or one object for a single
   * rule. A new limit keeps every algorithm's usage: counts, log entries, a quota's count, a leaky bucket's level,
   * a token bucket's tokens (capped at the new capacity, refilled at the new rate). A new window (window
   * algorithms only; a bucket's sets the unit its state counts in) keeps a sliding log's entries, and a fixed or
   * sliding window's count while its window lines up with the new one. A key's state lasts as long as the limits
   * that last wrote it need it. A variant has no queue (`schedule`). The 100 most recently used are cached.
   *
   * @example
   * const pro = limiter.withLimits({ limit: 1000 })
   * await pro.consume('user:42') // counts what user:42 used on the free plan
   */
  withLimits(limits: RuleLimits | readonly (RuleLimits | undefined)[]): Limiter
}

/**
 * Rejected by `schedule` when the queue is full; `decision.retryAfterMs` says when there will be room.
 *
 * @example
 * try { await limiter.schedule('sms', 1) } catch (err) {
 *   if (err instanceof RateLimitError) console.log(err.decision.retryAfterMs)
 * }
 */
export class RateLimitError extends Error {
  override readonly name = 'RateLimitError'
  readonly code = 'SLUICE_RATE_LIMITED'
  constructor(readonly decision: Decision) {
    super(
      decision.costExceedsCapacity
        ? `sluice: a cost of ${decision.cost} can never fit rule "${decision.rule}" (limit ${decision.limit})`
        : `sluice: rate limit "${decision.rule}" exceeded; retry after ${decision.retryAfterMs} ms`,
    )
  }
}
brandError(RateLimitError, 'SLUICE_RATE_LIMITED')

/**
 * Creates a limiter with one rule, or with stacked `rules` that a request must all pass.
 *
 * @example
 * const limiter = createLimiter({ algorithm: 'token-bucket', limit: 10, window: '1s' })
 * const decision = await limiter.consume('user:42')
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`)
 *
 * @example
 * const stacked = createLimiter({ rules: [
 *   { name: 'user', limit: 100, window: '1m' },
 *   { name: 'tenant', limit: 2000, window: '1m' },
 * ] })
 * await stacked.consume(['user:42', 'tenant:acme'])
 */
export function createLimiter(limiterOptions: LimiterOptions): Limiter {
  // The types catch most mistakes; these checks catch the rest, and JavaScript's.
  const options: LimiterFields = limiterOptions
  checkObject(options, 'options')
  const prefix = options.prefix ?? 'sluice'
  if (typeof prefix !== 'string' || prefix.length === 0) {
    throw new InvalidOptionError('prefix', `must be a non-empty string (got ${describe(prefix)})`)
  }
  const defaults = { algorithm: (options.algorithm ?? 'sliding-window') as AlgorithmName, prefix, name: 'default' }
  const sources = ruleSources(options)
  const rules = compileRules(sources, defaults)
  const defaultCost = checkWholeNumber(options.cost ?? 1, 'cost')
  const store = (options.store ?? new MemoryStore()) as Store
  if (store === null || typeof store !== 'object' || typeof store.bind !== 'function') {
    throw new InvalidOptionError('store', `must be a Store, with bind() (got ${describe(store)})`)
  }
  const logger = checkLogger(options.logger ?? console)
  const eventKeys = checkOneOf(options.eventKeys ?? 'hash', 'eventKeys', ['hash', 'raw'] as const)
  const label = options.label ?? prefix
  if (typeof label !== 'string' || label.length === 0) {
    throw new InvalidOptionError('label', `must be a non-empty string (got ${describe(label)})`)
  }
  const events = { eventKeys, limiter: label }
  const bound = store.bind(rules, { logger, eventKeys })
  // The queue behind `schedule` counts in key spaces of its own, bound beside the rules.
  const queue = rules.every((rule) => rule.algorithm === 'leaky-bucket')
    ? store.bind(rules.map(queueRule), { logger, eventKeys })
    : undefined
  let base: RuleLimiter | undefined
  const variants: Variants<Limiter> = new Variants(
    rules,
    sources,
    defaults,
    (variantRules) => {
      const variantBound = store.bind(variantRules, { logger, variant: true, eventKeys })
      return new RuleLimiter(store, variantBound, undefined, defaultCost, variants, events)
    },
    () => base as RuleLimiter,
  )
  base = new RuleLimiter(store, bound, queue, defaultCost, variants, events)
  return base
}

/**
 * `limiter.consume(keys, cost)` for the HTTP policies, which answer a request in the turn it arrived in when they can:
 * the Decision itself when the store decides in memory (and nobody listens for events), else the promise. An invalid
 * key or cost throws here, where `consume` would reject.
 *
 * @example
 * const decision = consumeNow(limiter, ['192.0.2.7'], 1)
 * if (decision instanceof Promise) return decision.then(answer)
 * return answer(decision)
 */
export function consumeNow(limiter: Limiter, keys: readonly string[], cost: number): Decision | Promise<Decision> {
  return limiter instanceof RuleLimiter ? limiter.consumeNow(keys, cost) : limiter.consume(keys, cost)
}

/** A cost given per call is checked where it arrives: a clear error, never a wrong decision. */
function checkCost(cost: unknown): void {
  if (!isCost(cost)) throw new TypeError(`sluice: cost must be a positive whole number (got ${describe(cost)})`)
}

class RuleLimiter implements Limiter {
  readonly rules: readonly CompiledRule[]
  /** A larger cost can never fit some rule. */
  private readonly largestFit: number
  /** What the events of this limiter need of it. */
  private readonly events: DecisionContext

  constructor(
    readonly store: Store,
    private readonly bound: BoundStore,
    /** The queue of `schedule` and `enqueue`, when every rule is a leaky bucket (and this is not a variant). */
    private readonly queue: BoundStore | undefined,
    private readonly defaultCost: number,
    private readonly variants: Variants<Limiter>,
    events: Omit<DecisionContext, 'rules'>,
  ) {
    this.rules = bound.rules
    this.largestFit = Math.min(...bound.rules.map((rule) => rule.limit))
    this.events = { rules: bound.rules, ...events }
  }

  consume(key: string | readonly string[], cost = this.defaultCost): Promise<Decision> {
    return this.decide(this.bound, key, cost, 'consume')
  }

  peek(key: string | readonly string[], cost = this.defaultCost): Promise<Decision> {
    return this.decide(this.bound, key, cost, 'peek')
  }

  /** `consume`, answered at once when it can be (see {@link consumeNow}); throws what `consume` rejects with. */
  consumeNow(keys: readonly string[], cost: number): Decision | Promise<Decision> {
    const { bound } = this
    // Events measure the store's promise; a cost that can never fit is peeked at first: both go the one way.
    if (bound.applyNow === undefined || observed() || cost > this.largestFit) return this.consume(keys, cost)
    return bound.applyNow(this.checkedKeys(keys, cost), cost, true)
  }

  async refund(key: string | readonly string[], cost = this.defaultCost): Promise<void> {
    await this.bound.refund(this.checkedKeys(key, cost), cost)
  }

  async reset(key: string | readonly string[]): Promise<void> {
    const keys = this.keysFor(key)
    await this.bound.reset(keys)
    await this.queue?.reset(keys)
  }

  withLimits(limits: RuleLimits | readonly (RuleLimits | undefined)[]): Limiter {
    return this.variants.of(limits)
  }

  enqueue(key: string | readonly string[], cost = this.defaultCost): Promise<Decision> {
    if (this.queue === undefined) {
      const why = this.rules.every((rule) => rule.algorithm === 'leaky-bucket')
        ? 'a limiter with other limits (withLimits) has no queue'
        : "a queue needs every rule to use algorithm 'leaky-bucket'"
      return Promise.reject(new TypeError(`sluice: ${why}`))
    }
    return this.decide(this.queue, key, cost, 'enqueue')
  }

  async schedule(
    key: string | readonly string[],
    cost = this.defaultCost,
    options: { signal?: AbortSignal } = {},
  ): Promise<Decision> {
    const { signal } = options
    signal?.throwIfAborted()
    const decision = await this.enqueue(key, cost)
    if (!decision.allowed) throw new RateLimitError(decision)
    // Every admitted place in the queue departs at least 1 ms on: there is always a wait.
    await sleep(decision.delayMs, signal)
    return decision
  }

  /**
   * The one way to the store: unless someone listens for events, the bound store's promise is the caller's, with
   * nothing chained on it and nothing built for the events.
   */
  private decide(
    bound: BoundStore,
    key: string | readonly string[],
    cost: number,
    operation: 'consume' | 'peek' | 'enqueue',
  ): Promise<Decision> {
    let keys: readonly string[]
    try {
      keys = this.checkedKeys(key, cost)
    } catch (error) {
      return Promise.reject(error)
    }
    const charge = operation !== 'peek'
    if (!observed()) return this.apply(bound, keys, cost, charge, undefined)
    return observeDecision(this.events, operation, keys, cost, (trace) => this.apply(bound, keys, cost, charge, trace))
  }

  private apply(
    bound: BoundStore,
    keys: readonly string[],
    cost: number,
    charge: boolean,
    trace: DecisionTrace | undefined,
  ): Promise<Decision> {
    // A cost that can never fit is answered without charging anything (a peek for the current numbers).
    if (cost > this.largestFit) return bound.apply(keys, 1, false, trace).then((peeked) => neverFits(peeked, cost))
    return bound.apply(keys, cost, charge, trace)
  }

  /** The keys of a call that charges or gives back `cost`, once both are checked: throws what is wrong with either. */
  private checkedKeys(key: string | readonly string[], cost: number): readonly string[] {
    const keys = this.keysFor(key)
    checkCost(cost)
    return keys
  }

  private keysFor(key: string | readonly string[]): readonly string[] {
    const count = this.rules.length
    if (typeof key === 'string') return count === 1 ? [key] : this.rules.map(() => key)
    let valid = Array.isArray(key) && key.length === count
    for (let i = 0; valid && i < count; i++) valid = typeof key[i] === 'string'
    if (!valid) {
      throw new TypeError(
        `sluice: key must be a string or an array of ${count} strings, one per rule (got ${describe(key)})`,
      )
    }
    return key
  }
}
