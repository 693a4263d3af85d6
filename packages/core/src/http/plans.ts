// Per-request limits (plans): a rule's `limit` and `window` may be functions of the request. The limiter is built
// with placeholders in their place (so every other option is checked at construction), and each request runs on
// `limiter.withLimits(...)` of what the functions return, which counts in the same keys.

import type { Limiter, RuleLimits } from '../limiter/limiter'
import { windowCanVary } from '../limiter/variants'
import { isCost } from '../util/checks'
import { type Duration, parseDuration } from '../util/duration'
import { describe, InvalidOptionError } from '../util/errors'

/**
 * A limit that depends on the request, for plans: a positive whole number, or a promise of one.
 *
 * @example
 * const limit: RequestLimit<Request> = (req) => (req.user?.plan === 'pro' ? 1000 : 10)
 */
export type RequestLimit<Req> = (req: Req) => number | Promise<number>

/**
 * A window that depends on the request (window algorithms only): a duration, or a promise of one.
 *
 * @example
 * const window: RequestWindow<Request> = (req) => (req.user?.plan === 'pro' ? '1m' : '1h')
 */
export type RequestWindow<Req> = (req: Req) => Duration | Promise<Duration>

/** One rule's functions, and where its options sit (`''` or `'rules[1]'`), for the errors. */
interface RulePlan<Req> {
  readonly limit: RequestLimit<Req> | undefined
  readonly window: RequestWindow<Req> | undefined
  readonly at: string
}

/** Every rule's functions, or undefined when no rule has one. */
export type RulePlans<Req> = readonly RulePlan<Req>[] | undefined

// What the limiter compiles in place of a function: `.limiter.rules` shows them for such a rule.
const PLACEHOLDER_LIMIT = 1
const PLACEHOLDER_WINDOW_MS = 1000

/**
 * Takes the functions out of each rule's options (at `ats[i]`): the options with placeholders in their place, and
 * the functions per rule (undefined when no rule has one).
 */
export function takePlans<Req, O extends { limit?: unknown; window?: unknown }>(
  rules: readonly O[],
  ats: readonly string[],
): { rules: O[]; plans: RulePlans<Req> } {
  let any = false
  const plans = rules.map((rule, i): RulePlan<Req> => {
    const at = ats[i] as string
    const limit = typeof rule?.limit === 'function' ? (rule.limit as RequestLimit<Req>) : undefined
    const window = typeof rule?.window === 'function' ? (rule.window as RequestWindow<Req>) : undefined
    if (limit !== undefined || window !== undefined) any = true
    return { limit, window, at }
  })
  const placed = rules.map((rule, i) => {
    const plan = plans[i] as RulePlan<Req>
    if (plan.limit === undefined && plan.window === undefined) return rule
    const copy = { ...rule }
    if (plan.limit !== undefined) copy.limit = PLACEHOLDER_LIMIT
    if (plan.window !== undefined) copy.window = PLACEHOLDER_WINDOW_MS
    return copy
  })
  return { rules: placed, plans: any ? plans : undefined }
}

/**
 * The per-request limits of a request, checked where they arrive (a TypeError naming the option, never a wrong
 * decision); undefined when no rule has a function. A window function is refused at construction for a rule
 * whose window cannot vary (a bucket's).
 */
export function limitsOf<Req>(
  plans: RulePlans<Req>,
  limiter: Limiter,
): ((req: Req) => RuleLimits[] | Promise<RuleLimits[]>) | undefined {
  if (plans === undefined) return undefined
  plans.forEach((plan, i) => {
    const rule = limiter.rules[i]
    if (plan.window !== undefined && rule !== undefined && !windowCanVary(rule)) {
      throw new InvalidOptionError(
        path(plan.at, 'window'),
        'cannot be a function for a bucket: its state counts in units of its rate, which its window sets (make `limit`, the capacity, the function)',
      )
    }
  })
  const limit = (plan: RulePlan<Req>, value: unknown): number => {
    if (!isCost(value)) {
      throw new TypeError(
        `sluice: option "${path(plan.at, 'limit')}" must return a positive whole number (got ${describe(value)})`,
      )
    }
    return value
  }
  const window = (plan: RulePlan<Req>, value: unknown): number => {
    try {
      return parseDuration(value, path(plan.at, 'window'))
    } catch {
      throw new TypeError(
        `sluice: option "${path(plan.at, 'window')}" must return milliseconds or a duration such as '1m' ` +
          `(got ${describe(value)})`,
      )
    }
  }
  return function limitsOf(req) {
    const values: unknown[] = []
    let pending = false
    for (const plan of plans) {
      const limitValue = plan.limit?.(req)
      const windowValue = plan.window?.(req)
      // A duration is a number or a string: anything else is a promise (or a mistake, which build reports).
      if (typeof limitValue === 'object' || typeof windowValue === 'object') pending = true
      values.push(limitValue, windowValue)
    }
    const build = (settled: readonly unknown[]): RuleLimits[] =>
      plans.map((plan, i) => {
        const limits: { limit?: number; window?: number } = {}
        if (plan.limit !== undefined) limits.limit = limit(plan, settled[2 * i])
        if (plan.window !== undefined) limits.window = window(plan, settled[2 * i + 1])
        return limits
      })
    // An await costs a turn of the microtask queue: only asynchronous functions pay it.
    return pending ? Promise.all(values).then(build) : build(values)
  }
}

function path(at: string, option: string): string {
  return at ? `${at}.${option}` : option
}
