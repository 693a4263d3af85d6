import type { AlgorithmName, AlgorithmParams, StoreAlgorithmName } from '../algorithms'
import { ALGORITHM_NAMES, isBucket } from '../algorithms'
import { type CalendarPeriod, type CalendarPeriodName, compileCalendarPeriod } from '../calendar'
import { checkObject, checkOneOf, checkWholeNumber } from '../util/checks'
import { parseDuration } from '../util/duration'
import { describe, InvalidOptionError } from '../util/errors'
import { gcd } from '../util/math'
import type { RuleFields } from './fields'

/**
 * A rule after validation: everything an algorithm and a store need, computed once at construction.
 *
 * @example
 * const [rule] = createLimiter({ limit: 100, window: '1m' }).rules
 * rule.keySpace // 'sluice:default:sw:'
 */
export interface CompiledRule extends AlgorithmParams {
  readonly name: string
  readonly algorithm: StoreAlgorithmName
  /** The limiter's key prefix. */
  readonly prefix: string
  /** A short, stable code for the algorithm, part of every store key (`fw`, `sl`, `sw`, `tb`, `lb`, `lq`, `cw`). */
  readonly algorithmCode: string
  /**
   * `prefix:name:code:`: the key space this rule counts in. A store keeps the rule's state for a user key under its
   * key space (MemoryStore: one table per key space; RedisStore: the space, escaped, before the hash-tagged key), so
   * two rules with the same key space share their counts. It names the counter, not the limit: a rule whose `limit`
   * or `window` changes keeps counting in the same space.
   */
  readonly keySpace: string
  /** A quota's calendar period; undefined for a rule with a `window`. */
  readonly calendar: CalendarPeriod | undefined
  /** How long a key stays refused after this rule rejected it, in ms; 0 for no block. */
  readonly blockMs: number
  /**
   * `prefix:name:block:`: where a store keeps the end of each key's block (a rule with `block` only). Kept apart
   * from the counts, so a block never costs the count it holds.
   */
  readonly blockKeySpace: string
}

const ALGORITHM_CODES: { readonly [name in StoreAlgorithmName]: string } = {
  'fixed-window': 'fw',
  'sliding-log': 'sl',
  'sliding-window': 'sw',
  'token-bucket': 'tb',
  'leaky-bucket': 'lb',
  'leaky-queue': 'lq',
  'calendar-window': 'cw',
}

const RULE_NAME = /^[A-Za-z0-9_.-]{1,64}$/
// Every integer an algorithm computes stays at or below this, so it is exact in JS and in Lua doubles: a bucket's
// capacity in units (limit * rateDenominator) and the sliding window's weighted count ((limit + 1) * windowMs).
const MAX_EXACT = Number.MAX_SAFE_INTEGER
// A rate is taken to a millionth of a token per second.
const RATE_SCALE = 1_000_000

/** What a rule takes from its limiter when it does not say: the algorithm, the key prefix and the name. */
export interface RuleDefaults {
  readonly algorithm: AlgorithmName
  readonly prefix: string
  readonly name: string
}

export function compileRule(options: RuleFields, at: string, defaults: RuleDefaults): CompiledRule {
  checkObject(options, at || 'options')
  const path = (option: string) => (at ? `${at}.${option}` : option)
  const name = options.name ?? defaults.name
  if (typeof name !== 'string' || !RULE_NAME.test(name)) {
    throw new InvalidOptionError(
      path('name'),
      `must be 1 to 64 letters, digits, '_', '.' or '-' (got ${describe(name)})`,
    )
  }
  const limit = checkWholeNumber(options.limit, path('limit'))
  const blockMs = options.block === undefined ? 0 : parseDuration(options.block, path('block'))
  if (options.period !== undefined) return compileQuota(options, at, { name, limit, blockMs, prefix: defaults.prefix })
  if (options.timeZone !== undefined) {
    throw new InvalidOptionError(path('timeZone'), 'applies only to a rule with a `period` (a quota)')
  }
  const algorithm = checkOneOf(options.algorithm ?? defaults.algorithm, path('algorithm'), ALGORITHM_NAMES)
  const bucket = isBucket(algorithm)
  let windowMs: number
  let rateNumerator: number
  let rateDenominator: number
  if (options.rate !== undefined) {
    if (!bucket) {
      throw new InvalidOptionError(
        path('rate'),
        `applies only to 'token-bucket' and 'leaky-bucket' (algorithm is '${algorithm}')`,
      )
    }
    const { rate } = options
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) {
      throw new InvalidOptionError(
        path('rate'),
        `must be a positive number of tokens per second (got ${describe(rate)})`,
      )
    }
    // r per second = micro / 10^6, per ms = micro / 10^9: keep the fraction reduced.
    const micro = Math.round(rate * RATE_SCALE)
    if (micro < 1 || !Number.isSafeInteger(micro)) {
      throw new InvalidOptionError(path('rate'), `must be between 0.000001 and 9e9 tokens per second (got ${rate})`)
    }
    const divisor = gcd(micro, RATE_SCALE * 1000)
    rateNumerator = micro / divisor
    rateDenominator = (RATE_SCALE * 1000) / divisor
    windowMs = Math.max(1, Math.ceil((limit * rateDenominator) / rateNumerator))
  } else {
    if (options.window === undefined) {
      throw new InvalidOptionError(path('window'), `is required${bucket ? ' (or give a rate)' : ''}`)
    }
    windowMs = parseDuration(options.window, path('window'))
    // Not reduced by the limit: a token is windowMs units whatever the limit, so a key whose limit changes (a plan,
    // see Limiter.withLimits) keeps a bucket state that means the same. (limit + 1) * windowMs is checked below.
    rateNumerator = limit
    rateDenominator = windowMs
  }
  if (limit * rateDenominator > MAX_EXACT || (limit + 1) * windowMs > MAX_EXACT) {
    throw new InvalidOptionError(
      path(options.rate !== undefined ? 'rate' : 'limit'),
      'is too large or too fine to count exactly',
    )
  }
  const params = { limit, windowMs, rateNumerator, rateDenominator, calendar: undefined }
  return makeRule(name, algorithm, defaults.prefix, params, blockMs)
}

/**
 * A rule with a `period`: a calendar window. Its `windowMs` is the period's nominal length (a day, or 30 days for
 * a month), what `RateLimit-Policy` shows as `w`; the real boundaries come from the calendar.
 */
function compileQuota(
  options: RuleFields,
  at: string,
  { name, limit, blockMs, prefix }: { name: string; limit: number; blockMs: number; prefix: string },
): CompiledRule {
  const path = (option: string) => (at ? `${at}.${option}` : option)
  for (const option of ['window', 'rate'] as const) {
    if (options[option] !== undefined) {
      throw new InvalidOptionError(
        path(option),
        'cannot be combined with `period`: a quota counts per calendar day or month, not per window',
      )
    }
  }
  if (options.algorithm !== undefined && options.algorithm !== 'fixed-window') {
    throw new InvalidOptionError(
      path('algorithm'),
      `cannot be '${options.algorithm}' with \`period\`: a quota is a fixed window on the calendar (leave \`algorithm\` out)`,
    )
  }
  const { period, timeZone } = options as { period: CalendarPeriodName; timeZone?: string }
  const calendar = compileCalendarPeriod(timeZone === undefined ? { period } : { period, timeZone }, at)
  const windowMs = calendar.policyWindowSeconds * 1000
  // A calendar window reads no rate; these keep the rule's numbers the same shape as every other's.
  const params = { limit, windowMs, rateNumerator: limit, rateDenominator: windowMs, calendar }
  return makeRule(name, 'calendar-window', prefix, params, blockMs)
}

/** The rule `schedule` runs: the same limit and rate, as a queue, in a key space of its own. */
export function queueRule(rule: CompiledRule): CompiledRule {
  return makeRule(rule.name, 'leaky-queue', rule.prefix, rule, 0)
}

function makeRule(
  name: string,
  algorithm: StoreAlgorithmName,
  prefix: string,
  params: AlgorithmParams,
  blockMs: number,
): CompiledRule {
  const algorithmCode = ALGORITHM_CODES[algorithm]
  return {
    name,
    algorithm,
    prefix,
    algorithmCode,
    keySpace: `${prefix}:${name}:${algorithmCode}:`,
    limit: params.limit,
    windowMs: params.windowMs,
    rateNumerator: params.rateNumerator,
    rateDenominator: params.rateDenominator,
    calendar: params.calendar,
    blockMs,
    blockKeySpace: `${prefix}:${name}:block:`,
  }
}
