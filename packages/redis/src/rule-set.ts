import type { CalendarPeriod, CompiledRule } from '@sluice/core/store'
import { redisBlockKeyPrefix, redisKeyPrefix } from './keys'
import { codeMask } from './script'

/** What a call asks of the script: apply and charge, apply without charging, or give a cost back. */
export type Mode = 'charge' | 'peek' | 'refund'

/**
 * A list of rules as the script reads them (a rule set of main.lua): what every call for those rules sends alike,
 * worked out once, when a store binds them. (Not a user's "plan", the limits a limiter's `withLimits` gives a key.)
 */
export interface RuleSet {
  /** The algorithms of these rules (see `codeMask`): a batch's script holds those of all its requests. */
  readonly codeMask: number
  /**
   * Per rule: algorithm code, limit, window_ms, rate_numerator, rate_denominator, block_ms, as the script reads them;
   * a calendar rule's period follows, for its boundaries around the time of each call.
   */
  readonly ruleArgs: readonly (string | CalendarPeriod)[]
  readonly ruleCount: number
  /** Whether a rule counts calendar periods, so that a call may be answered 'SLUICE_CLOCK'. */
  readonly calendar: boolean
  /** Per rule with a block: its index, the length of its key prefix, and its block key prefix. */
  readonly blocks: readonly (readonly [index: number, prefixLength: number, blockPrefix: string])[]
}

/**
 * The rule set of a list of rules.
 *
 * @example
 * const ruleSet = ruleSetOf(limiter.rules)
 */
export function ruleSetOf(rules: readonly CompiledRule[]): RuleSet {
  const ruleArgs: (string | CalendarPeriod)[] = []
  for (const rule of rules) {
    ruleArgs.push(
      rule.algorithmCode,
      String(rule.limit),
      String(rule.windowMs),
      String(rule.rateNumerator),
      String(rule.rateDenominator),
      String(rule.blockMs),
    )
    if (rule.calendar !== undefined) ruleArgs.push(rule.calendar)
  }
  const blocks = rules.flatMap((rule, i) =>
    rule.blockMs > 0 ? [[i, redisKeyPrefix(rule).length, redisBlockKeyPrefix(rule)] as const] : [],
  )
  return {
    codeMask: codeMask(rules.map((rule) => rule.algorithmCode)),
    ruleArgs,
    ruleCount: rules.length,
    calendar: rules.some((rule) => rule.calendar !== undefined),
    blocks,
  }
}

/**
 * The block keys of the rules of `ruleSet` that have a block, for their Redis keys `redisKeys` (in the order of the
 * rules): the same hash tag after the block prefix.
 *
 * @example
 * await client.del(...redisKeys, ...blockKeys(ruleSet, redisKeys))
 */
export function blockKeys(ruleSet: RuleSet, redisKeys: readonly string[]): string[] {
  return ruleSet.blocks.map(
    ([i, prefixLength, blockPrefix]) => blockPrefix + (redisKeys[i] as string).slice(prefixLength),
  )
}
