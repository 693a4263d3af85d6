import type { LimiterFields, RuleFields } from '../rules/fields'
import { type CompiledRule, compileRule, type RuleDefaults } from '../rules/rules'
import { describe, InvalidOptionError } from '../util/errors'
import type { RuleSource } from './variants'

/** The options of the single rule that go inside each rule when `rules` is given (with `limit`). */
const RULE_OPTIONS = ['window', 'rate', 'name', 'period', 'timeZone', 'block'] as const

/**
 * Each rule's options as given, and where they sit: the single rule of the top-level options, or `rules[i]`.
 *
 * @example
 * ruleSources({ limit: 5, window: '1s' }) // [{ options: { limit: 5, window: '1s', algorithm: 'sliding-window' }, at: '' }]
 */
export function ruleSources(options: LimiterFields): RuleSource[] {
  if (options.rules === undefined) {
    if (options.limit === undefined) throw new InvalidOptionError('limit', 'is required (or give `rules`)')
    const single: RuleFields = { limit: options.limit }
    // An inherited default algorithm is not the rule's own: a quota takes none.
    if (options.algorithm !== undefined || options.period === undefined) {
      single.algorithm = options.algorithm ?? 'sliding-window'
    }
    for (const option of RULE_OPTIONS) {
      if (options[option] !== undefined) Object.assign(single, { [option]: options[option] })
    }
    return [{ options: single, at: '' }]
  }
  if (!Array.isArray(options.rules) || options.rules.length === 0) {
    throw new InvalidOptionError('rules', `must be a non-empty array of rules (got ${describe(options.rules)})`)
  }
  for (const option of ['limit', ...RULE_OPTIONS] as const) {
    if (options[option] !== undefined) {
      throw new InvalidOptionError(option, 'goes inside each rule when `rules` is given')
    }
  }
  const several = options.rules.length > 1
  return options.rules.map((rule: RuleFields, i) => {
    if (several && rule !== null && typeof rule === 'object' && rule.name === undefined) {
      throw new InvalidOptionError(`rules[${i}].name`, 'is required when there are several rules')
    }
    return { options: rule, at: `rules[${i}]` }
  })
}

/**
 * The rules of a limiter, compiled from their sources; two rules may not share a name.
 *
 * @example
 * const rules = compileRules(ruleSources(options), { algorithm: 'sliding-window', prefix: 'sluice', name: 'default' })
 */
export function compileRules(sources: readonly RuleSource[], defaults: RuleDefaults): CompiledRule[] {
  const seen = new Set<string>()
  return sources.map(({ options, at }) => {
    const compiled = compileRule(options, at, defaults)
    if (seen.has(compiled.name)) throw new InvalidOptionError(`${at}.name`, `"${compiled.name}" is used by two rules`)
    seen.add(compiled.name)
    return compiled
  })
}
