import type { RuleFields } from '../rules/fields'
import { type CompiledRule, compileRule, type RuleDefaults } from '../rules/rules'
import { isCost } from '../util/checks'
import type { Duration } from '../util/duration'
import { parseDuration } from '../util/duration'
import { describe } from '../util/errors'

/**
 * Other limits for one rule of a limiter (a plan): its `limit`, and for a rule with a `window`, its window. What is
 * not given stays as the rule has it.
 *
 * @example
 * const pro: RuleLimits = { limit: 1000 }
 */
export interface RuleLimits {
  readonly limit?: number
  readonly window?: Duration
}

/** Where a rule came from: its options as given, and where they sit (`''` or `'rules[1]'`), for recompiling it. */
export interface RuleSource {
  readonly options: RuleFields
  readonly at: string
}

/** The limiters of other limits are kept this many at most, the least recently used dropped first. */
export const MAX_VARIANTS = 100

/**
 * A limiter's variants (see `Limiter.withLimits`): the same rules with other limits, bound on the same store in the
 * same key spaces, so a key keeps what it has used when its limit changes. One variant per distinct set of limits,
 * built on first use and kept in a bounded least-recently-used cache, so a plan costs one lookup per request.
 */
export class Variants<L> {
  private readonly cache = new Map<string, L>()
  private readonly baseSignature: string

  constructor(
    private readonly base: readonly CompiledRule[],
    private readonly sources: readonly RuleSource[],
    private readonly defaults: RuleDefaults,
    /** Binds variant rules into a limiter. */
    private readonly build: (rules: readonly CompiledRule[]) => L,
    private readonly baseLimiter: () => L,
  ) {
    this.baseSignature = base.map((rule) => `${rule.limit}/${rule.windowMs}`).join(',')
  }

  /** The limiter of `limits` (one per rule, or one object for a single rule). Invalid limits throw a TypeError. */
  of(limits: RuleLimits | readonly (RuleLimits | undefined)[]): L {
    const perRule = this.perRule(limits)
    const resolved = this.base.map((rule, i) => this.resolve(rule, i, perRule[i]))
    const signature = resolved.map(([limit, windowMs]) => `${limit}/${windowMs}`).join(',')
    if (signature === this.baseSignature) return this.baseLimiter()
    let variant = this.cache.get(signature)
    if (variant !== undefined) {
      // Most recently used last: delete and set again.
      this.cache.delete(signature)
      this.cache.set(signature, variant)
      return variant
    }
    variant = this.build(this.base.map((rule, i) => this.compile(rule, i, resolved[i] as [number, number])))
    if (this.cache.size >= MAX_VARIANTS) this.cache.delete(this.cache.keys().next().value as string)
    this.cache.set(signature, variant)
    return variant
  }

  private perRule(limits: unknown): readonly unknown[] {
    if (Array.isArray(limits) && limits.length === this.base.length) return limits
    if (limits !== null && typeof limits === 'object' && !Array.isArray(limits) && this.base.length === 1) {
      return [limits]
    }
    throw new TypeError(
      `sluice: limits must be ${this.base.length === 1 ? 'an object { limit, window } or ' : ''}an array of ` +
        `${this.base.length} (one per rule, undefined to keep a rule's) (got ${describe(limits)})`,
    )
  }

  /** A rule's limit and window in ms under `limits`, checked. */
  private resolve(rule: CompiledRule, i: number, limits: unknown): [limit: number, windowMs: number] {
    if (limits === undefined) return [rule.limit, rule.windowMs]
    if (limits === null || typeof limits !== 'object') {
      throw new TypeError(`sluice: the limits of rule "${rule.name}" must be an object (got ${describe(limits)})`)
    }
    const { limit = rule.limit, window } = limits as RuleLimits
    const option = this.path(i)
    if (!isCost(limit)) {
      throw new TypeError(
        `sluice: option "${option('limit')}" must be a positive whole number (got ${describe(limit)})`,
      )
    }
    if (window === undefined) return [limit, rule.windowMs]
    const windowMs = parseDuration(window, option('window'))
    if (windowMs !== rule.windowMs && !windowCanVary(rule)) {
      const why =
        rule.calendar !== undefined
          ? 'a quota counts per calendar period'
          : "a bucket's state counts in units of its rate, set by its window (vary its `limit`, the capacity)"
      throw new TypeError(`sluice: option "${option('window')}" cannot vary: ${why}`)
    }
    return [limit, windowMs]
  }

  private compile(rule: CompiledRule, i: number, [limit, windowMs]: [number, number]): CompiledRule {
    if (limit === rule.limit && windowMs === rule.windowMs) return rule
    const { options, at } = this.sources[i] as RuleSource
    const changed: RuleFields = { ...options, limit }
    if (windowMs !== rule.windowMs) changed.window = windowMs
    return compileRule(changed, at, this.defaults)
  }

  private path(i: number): (option: string) => string {
    const { at } = this.sources[i] as RuleSource
    return (option) => (at ? `${at}.${option}` : option)
  }
}

/**
 * Whether a rule's window may vary per request: for the window algorithms, not for a quota (it has a period) nor a
 * bucket (its state counts in units of its rate, which its window sets).
 *
 * @example
 * if (typeof options.window === 'function' && !windowCanVary(rule)) throw new InvalidOptionError('window', '...')
 */
export function windowCanVary(rule: CompiledRule): boolean {
  return rule.calendar === undefined && rule.algorithm !== 'token-bucket' && rule.algorithm !== 'leaky-bucket'
}
