import type { AlgorithmName } from './algorithms'
import type { Duration } from './duration'
import { describe, InvalidOptionError } from './errors'
import { MemoryStore } from './memory-store'
import { type CompiledRule, compileRule, queueRule, type RuleOptions } from './rules'
import type { Outcome, Store } from './store'

/**
 * Options of {@link createLimiter}: one rule given inline, or several in `rules`.
 *
 * @example
 * const options: LimiterOptions = { algorithm: 'token-bucket', limit: 20, window: '10s' }
 */
export interface LimiterOptions {
  /** Default `'sliding-window'`; with `rules`, the default of each rule. */
  algorithm?: AlgorithmName
  /** L, or the capacity B of a bucket. */
  limit?: number
  /** W. Buckets refill at limit / window. */
  window?: Duration
  /** Buckets only: tokens per second, overriding limit / window. */
  rate?: number
  /** The name of the single rule in decisions and headers. Default `'default'`. */
  name?: string
  /** Stacked limits: a request must pass every rule, and is charged to all or to none. */
  rules?: readonly RuleOptions[]
  /** Where state lives. Default: a new {@link MemoryStore}. */
  store?: Store
  /** Put before every store key. Default `'sluice'`. */
  prefix?: string
  /** The cost of a request when `consume` is given none. Default 1. */
  cost?: number
}

/**
 * The verdict on one request, for one rule.
 *
 * @example
 * for (const d of decision.rules ?? [decision]) console.log(d.rule, d.remaining)
 */
export interface RuleDecision {
  /** Whether the request was admitted and charged (for one rule of a stacked limiter: whether this rule admits). */
  readonly allowed: boolean
  /** The rule's name. */
  readonly rule: string
  /** L, or the capacity of a bucket or queue. */
  readonly limit: number
  /** The rule's window in milliseconds. */
  readonly windowMs: number
  /** Requests of cost 1 that would still be admitted right now. Never negative. */
  readonly remaining: number
  /** Milliseconds until the key is back to its full allowance if nothing else arrives. */
  readonly resetMs: number
  /** 0 when admitted; else the shortest wait after which the same request would be admitted. */
  readonly retryAfterMs: number
  /** `schedule` only: how long the admitted request waited in the queue before departing, in ms. */
  readonly delayMs: number
  /** The cost this decision was asked about. */
  readonly cost: number
  /** True when the cost is above the rule's limit: it can never be admitted, and `retryAfterMs` is Infinity. */
  readonly costExceedsCapacity: boolean
}

/**
 * The verdict on one request. For a stacked limiter it is the decision of the rule that bound (the rejecting
 * one with the longest wait, or else the admitting one with the fewest remaining), and `rules` holds every
 * rule's decision, in the order of the rules.
 * @example
 * const decision: Decision = await limiter.consume('user:42')
 * if (!decision.allowed) res.setHeader('Retry-After', Math.ceil(decision.retryAfterMs / 1000))
 */
export interface Decision extends RuleDecision {
  readonly rules?: readonly RuleDecision[]
}

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
  constructor(readonly decision: Decision) {
    super(
      decision.costExceedsCapacity
        ? `sluice: a cost of ${decision.cost} can never fit rule "${decision.rule}" (limit ${decision.limit})`
        : `sluice: rate limit "${decision.rule}" exceeded; retry after ${decision.retryAfterMs} ms`,
    )
  }
}

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
export function createLimiter(options: LimiterOptions): Limiter {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError('options', `must be an object (got ${describe(options)})`)
  }
  const prefix = options.prefix ?? 'sluice'
  if (typeof prefix !== 'string' || prefix.length === 0) {
    throw new InvalidOptionError('prefix', `must be a non-empty string (got ${describe(prefix)})`)
  }
  const algorithm = options.algorithm ?? 'sliding-window'
  let rules: CompiledRule[]
  if (options.rules !== undefined) {
    if (!Array.isArray(options.rules) || options.rules.length === 0) {
      throw new InvalidOptionError('rules', `must be a non-empty array of rules (got ${describe(options.rules)})`)
    }
    for (const option of ['limit', 'window', 'rate', 'name'] as const) {
      if (options[option] !== undefined) {
        throw new InvalidOptionError(option, 'goes inside each rule when `rules` is given')
      }
    }
    const several = options.rules.length > 1
    rules = options.rules.map((rule: RuleOptions, i) => {
      if (several && rule !== null && typeof rule === 'object' && rule.name === undefined) {
        throw new InvalidOptionError(`rules[${i}].name`, 'is required when there are several rules')
      }
      return compileRule(rule, `rules[${i}]`, { algorithm, prefix, name: 'default' })
    })
    const seen = new Set<string>()
    rules.forEach((rule, i) => {
      if (seen.has(rule.name)) throw new InvalidOptionError(`rules[${i}].name`, `"${rule.name}" is used by two rules`)
      seen.add(rule.name)
    })
  } else {
    const { limit, window, rate, name } = options
    const single: RuleOptions = { limit: limit as number, algorithm }
    if (window !== undefined) single.window = window
    if (rate !== undefined) single.rate = rate
    if (name !== undefined) single.name = name
    rules = [compileRule(single, '', { algorithm, prefix, name: 'default' })]
  }
  const defaultCost = options.cost ?? 1
  if (!isCost(defaultCost)) {
    throw new InvalidOptionError('cost', `must be a positive whole number (got ${describe(defaultCost)})`)
  }
  const store = options.store ?? new MemoryStore()
  if (
    store === null ||
    typeof store !== 'object' ||
    typeof store.apply !== 'function' ||
    typeof store.reset !== 'function'
  ) {
    throw new InvalidOptionError('store', `must be a Store with apply() and reset() (got ${describe(store)})`)
  }
  return new RuleLimiter(rules, store, defaultCost)
}

function isCost(cost: unknown): cost is number {
  return typeof cost === 'number' && Number.isSafeInteger(cost) && cost > 0
}

/** A cost given per call is checked where it arrives: a clear error, never a wrong decision. */
function checkCost(cost: unknown): void {
  if (!isCost(cost)) throw new TypeError(`sluice: cost must be a positive whole number (got ${describe(cost)})`)
}

class RuleLimiter implements Limiter {
  private readonly queueRules: readonly CompiledRule[] | undefined
  private readonly stacked: boolean
  /** The rule of a single-rule limiter, for the fast path. */
  private readonly single: CompiledRule | undefined

  constructor(
    readonly rules: readonly CompiledRule[],
    readonly store: Store,
    private readonly defaultCost: number,
  ) {
    this.stacked = rules.length > 1
    this.single = this.stacked ? undefined : rules[0]
    this.queueRules = rules.every((rule) => rule.algorithm === 'leaky-bucket') ? rules.map(queueRule) : undefined
  }

  consume(key: string | readonly string[], cost = this.defaultCost): Promise<Decision> {
    const rule = this.single
    if (rule !== undefined && typeof key === 'string' && isCost(cost) && cost <= rule.limit) {
      return this.decideOne(rule, key, cost, true)
    }
    return this.decide(this.rules, key, cost, true)
  }

  peek(key: string | readonly string[], cost = this.defaultCost): Promise<Decision> {
    return this.decide(this.rules, key, cost, false)
  }

  async refund(key: string | readonly string[], cost = this.defaultCost): Promise<void> {
    const keys = this.keysFor(key)
    checkCost(cost)
    await this.store.refund(this.rules, keys, cost)
  }

  async reset(key: string | readonly string[]): Promise<void> {
    const keys = this.keysFor(key)
    await this.store.reset(this.rules, keys)
    if (this.queueRules !== undefined) await this.store.reset(this.queueRules, keys)
  }

  enqueue(key: string | readonly string[], cost = this.defaultCost): Promise<Decision> {
    if (this.queueRules === undefined) {
      return Promise.reject(new TypeError("sluice: a queue needs every rule to use algorithm 'leaky-bucket'"))
    }
    return this.decide(this.queueRules, key, cost, true)
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
    if (decision.delayMs > 0) await sleep(decision.delayMs, signal)
    return decision
  }

  private decide(
    rules: readonly CompiledRule[],
    key: string | readonly string[],
    cost: number,
    charge: boolean,
  ): Promise<Decision> {
    let keys: readonly string[]
    try {
      keys = this.keysFor(key)
      checkCost(cost)
    } catch (error) {
      return Promise.reject(error)
    }
    for (const rule of rules) {
      // A cost that can never fit is answered without charging anything (a peek for the current numbers).
      if (cost > rule.limit) return this.decide(rules, keys, 1, false).then((peeked) => this.neverFits(peeked, cost))
    }
    let outcomes: readonly Outcome[] | Promise<readonly Outcome[]>
    try {
      outcomes = this.store.apply(rules, keys, cost, charge)
    } catch (error) {
      return Promise.reject(error)
    }
    if (outcomes instanceof Promise) return outcomes.then((resolved) => this.combine(rules, resolved, cost))
    return Promise.resolve(this.combine(rules, outcomes, cost))
  }

  /** The hot path: one rule, one key, a cost that fits; no arrays unless the store lacks `applyOne`. */
  private decideOne(rule: CompiledRule, key: string, cost: number, charge: boolean): Promise<Decision> {
    const { store } = this
    let outcome: Outcome | Promise<Outcome>
    try {
      outcome =
        store.applyOne !== undefined
          ? store.applyOne(rule, key, cost, charge)
          : firstOutcome(store.apply(this.rules, [key], cost, charge))
    } catch (error) {
      return Promise.reject(error)
    }
    if (outcome instanceof Promise) return outcome.then((resolved) => toDecision(rule, resolved, cost))
    return Promise.resolve(toDecision(rule, outcome, cost))
  }

  private keysFor(key: string | readonly string[]): readonly string[] {
    if (typeof key === 'string') {
      if (!this.stacked) return [key]
      return this.rules.map(() => key)
    }
    if (!Array.isArray(key) || key.length !== this.rules.length || !key.every((k) => typeof k === 'string')) {
      throw new TypeError(
        `sluice: key must be a string or an array of ${this.rules.length} strings, one per rule (got ${describe(key)})`,
      )
    }
    return key
  }

  private combine(rules: readonly CompiledRule[], outcomes: readonly Outcome[], cost: number): Decision {
    if (!this.stacked) return toDecision(rules[0] as CompiledRule, outcomes[0] as Outcome, cost)
    const decisions = outcomes.map((outcome, i) => toDecision(rules[i] as CompiledRule, outcome, cost))
    const allowed = decisions.every((d) => d.allowed)
    let binding = decisions[0] as RuleDecision
    for (const d of decisions) {
      if (
        allowed
          ? d.remaining < binding.remaining
          : !d.allowed && (binding.allowed || d.retryAfterMs > binding.retryAfterMs)
      ) {
        binding = d
      }
    }
    return { ...binding, allowed, rules: decisions }
  }

  private neverFits(peeked: Decision, cost: number): Decision {
    const mark = (d: RuleDecision): RuleDecision => {
      const tooBig = cost > d.limit
      return {
        ...d,
        allowed: !tooBig,
        cost,
        costExceedsCapacity: tooBig,
        retryAfterMs: tooBig ? Number.POSITIVE_INFINITY : 0,
      }
    }
    const rules = peeked.rules?.map(mark)
    const binding = rules?.find((d) => d.costExceedsCapacity) ?? mark(peeked)
    return rules ? { ...binding, allowed: false, rules } : { ...binding, allowed: false }
  }
}

function firstOutcome(outcomes: readonly Outcome[] | Promise<readonly Outcome[]>): Outcome | Promise<Outcome> {
  return outcomes instanceof Promise ? outcomes.then((resolved) => resolved[0] as Outcome) : (outcomes[0] as Outcome)
}

function toDecision(rule: CompiledRule, outcome: Outcome, cost: number): RuleDecision {
  return {
    allowed: outcome.allowed,
    rule: rule.name,
    limit: rule.limit,
    windowMs: rule.windowMs,
    remaining: Math.max(0, outcome.remaining),
    resetMs: outcome.resetMs,
    retryAfterMs: outcome.retryAfterMs,
    delayMs: outcome.delayMs,
    cost,
    costExceedsCapacity: false,
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
