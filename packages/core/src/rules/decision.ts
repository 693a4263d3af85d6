import type { CompiledRule } from './rules'

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
 * Decisions are made by these classes, never by object literals, for the reason in `algorithms/step.ts`: a literal's
 * template goes stale when another literal of the same fields widens one (a `retryAfterMs` of Infinity, a window past
 * 2^31 ms), and every literal made from it is then built in the runtime, a hundred times slower.
 */
class OneDecision implements RuleDecision {
  constructor(
    readonly allowed: boolean,
    readonly rule: string,
    readonly limit: number,
    readonly windowMs: number,
    readonly remaining: number,
    readonly resetMs: number,
    readonly retryAfterMs: number,
    readonly delayMs: number,
    readonly cost: number,
    readonly costExceedsCapacity: boolean,
  ) {}
}

/** A stacked limiter's decision: the binding rule's, `allowed` for the whole request, and every rule's. */
class StackedDecision extends OneDecision implements Decision {
  constructor(
    binding: RuleDecision,
    allowed: boolean,
    readonly rules: readonly RuleDecision[],
  ) {
    super(
      allowed,
      binding.rule,
      binding.limit,
      binding.windowMs,
      binding.remaining,
      binding.resetMs,
      binding.retryAfterMs,
      binding.delayMs,
      binding.cost,
      binding.costExceedsCapacity,
    )
  }
}

/**
 * One rule's decision from what a store computed for it.
 *
 * @example
 * const decision = ruleDecision(rule, algorithms[rule.algorithm](state, now, 1, rule, true), 1)
 */
export function ruleDecision(rule: CompiledRule, outcome: Outcome, cost: number): RuleDecision {
  const { allowed, remaining, resetMs, retryAfterMs, delayMs } = outcome
  const { name, limit, windowMs } = rule
  return new OneDecision(
    allowed,
    name,
    limit,
    windowMs,
    Math.max(0, remaining),
    resetMs,
    retryAfterMs,
    delayMs,
    cost,
    false,
  )
}

/**
 * The Decision on one request from the outcomes of its rules (in the order of the rules): a bound store answers
 * with it, so the limiter hands the store's own promise to the caller.
 *
 * @example
 * return Promise.resolve(decisionOf(this.rules, outcomes, cost))
 */
export function decisionOf(rules: readonly CompiledRule[], outcomes: readonly Outcome[], cost: number): Decision {
  if (rules.length === 1) return ruleDecision(rules[0] as CompiledRule, outcomes[0] as Outcome, cost)
  return stackedDecision(outcomes.map((outcome, i) => ruleDecision(rules[i] as CompiledRule, outcome, cost)))
}

/**
 * The decision of several rules decided together: allowed when every one admitted, with the numbers of the one that
 * bound (the rejecting one with the longest wait, or else the admitting one with the fewest remaining) and every
 * rule's decision in `rules`. The rules of one stacked limiter, or of every limiter one response passed.
 *
 * @example
 * const decision = stackedDecision([globalDecision, routeDecision]) // route: 3 left of 5; global: 7 of 10
 * decision.remaining // 3
 */
export function stackedDecision(decisions: readonly RuleDecision[]): Decision {
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
  return new StackedDecision(binding, allowed, decisions)
}

/**
 * A rule's decision under another name: a rule of a second limiter on one response whose name the first has taken.
 *
 * @example
 * renamedDecision(routeDecision, 'default-2').rule // 'default-2'
 */
export function renamedDecision(d: RuleDecision, rule: string): RuleDecision {
  const { allowed, limit, windowMs, remaining, resetMs, retryAfterMs, delayMs, cost, costExceedsCapacity } = d
  return new OneDecision(
    allowed,
    rule,
    limit,
    windowMs,
    remaining,
    resetMs,
    retryAfterMs,
    delayMs,
    cost,
    costExceedsCapacity,
  )
}

/**
 * The Decision on a cost that can never fit some rule, from a peek at cost 1: rejected, nothing charged, and the
 * rules it exceeds marked with an endless wait.
 *
 * @example
 * const decision = neverFits(await bound.apply(keys, 1, false), 500)
 */
export function neverFits(peeked: Decision, cost: number): Decision {
  const mark = (d: RuleDecision, allowed: boolean): RuleDecision => {
    const tooBig = cost > d.limit
    const { rule, limit, windowMs, remaining, resetMs, delayMs } = d
    const retryAfterMs = tooBig ? Number.POSITIVE_INFINITY : 0
    return new OneDecision(
      allowed && !tooBig,
      rule,
      limit,
      windowMs,
      remaining,
      resetMs,
      retryAfterMs,
      delayMs,
      cost,
      tooBig,
    )
  }
  const rules = peeked.rules?.map((d) => mark(d, true))
  if (rules === undefined) return mark(peeked, false)
  return new StackedDecision(rules.find((d) => d.costExceedsCapacity) ?? mark(peeked, false), false, rules)
}
