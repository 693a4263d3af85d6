import type { CalendarPeriod, CompiledRule, Outcome } from '@sluice/core/store'
import type { StoreClient } from './client'
import { errorCode } from './errors'
import { redisBlockKeyPrefix, redisKeyPrefix } from './keys'
import { type Script, scriptFor } from './script'

/** What a call asks of the script: apply and charge, apply without charging, or give a cost back. */
export type Mode = 'charge' | 'peek' | 'refund'

/** What every call for one list of rules sends alike, worked out once, when a store binds them. */
export interface Plan {
  /** The script with exactly the algorithms of these rules. */
  readonly script: Script
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
 * The plan of a list of rules.
 *
 * @example
 * const plan = planFor(limiter.rules)
 */
export function planFor(rules: readonly CompiledRule[]): Plan {
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
    script: scriptFor(rules.map((rule) => rule.algorithmCode)),
    ruleArgs,
    ruleCount: rules.length,
    calendar: rules.some((rule) => rule.calendar !== undefined),
    blocks,
  }
}

/**
 * The block keys of the rules of `plan` that have a block, for their Redis keys `redisKeys` (in the order of the
 * rules): the same hash tag after the block prefix.
 *
 * @example
 * await client.del(...redisKeys, ...blockKeys(plan, redisKeys))
 */
export function blockKeys(plan: Plan, redisKeys: readonly string[]): string[] {
  return plan.blocks.map(([i, prefixLength, blockPrefix]) => blockPrefix + (redisKeys[i] as string).slice(prefixLength))
}

// With an explicit clock the trace's time need not follow the wall clock: a key must outlive its logical expiry
// by this much real time, so Redis never drops state the trace still holds (the script checks the logical expiry).
const EXPLICIT_CLOCK_TTL_SLACK_MS = 3_600_000
const FIELDS_PER_REPLY = 5

// The probe of a node that failed: a write, so that a node that reads but cannot write (OOM, READONLY, MISCONF) is
// not taken for recovered, on a key of its own that expires at once, in the slot of the key that failed.
const PROBE = "redis.call('SET', KEYS[1], '1', 'PX', 1000) return 1"

/**
 * Runs the scripts: one EVALSHA per call; after a Redis restart or SCRIPT FLUSH (NOSCRIPT, also when ioredis Cluster
 * wraps it in "Too many Cluster redirections"), one EVAL that loads the script again and runs it. `clock` is the tests'
 * replay clock; without it the script reads Redis's TIME.
 *
 * @example
 * const outcomes = await new ScriptRunner(client, undefined).run(plan, ['sluice:default:sw:{42}'], 1, 'charge')
 */
export class ScriptRunner {
  constructor(
    private readonly client: Pick<StoreClient, 'evalsha' | 'eval'>,
    private readonly clock: (() => number) | undefined,
  ) {}

  /**
   * One call of `plan`'s script on `redisKeys`. `replied` is told when Redis answered NOSCRIPT: the connection is
   * alive, and the call goes on with the reload.
   */
  run(plan: Plan, redisKeys: readonly string[], cost: number, mode: Mode, replied?: () => void): Promise<Outcome[]> {
    const instantMs = this.clock === undefined ? Date.now() : Math.floor(this.clock())
    const sent = this.send(plan, redisKeys, cost, mode, instantMs, replied)
    if (!plan.calendar) return sent
    // The Redis clock is more than a period away from this instance's: ask again around the Redis time. A second
    // such answer (the Redis clock jumped by a period within one round trip) is an error, never a guess.
    return sent.catch((error: unknown) => {
      const redisMs = redisClockOf(error)
      if (redisMs === undefined) throw error
      return this.send(plan, redisKeys, cost, mode, redisMs, replied).catch((again: unknown) => {
        if (redisClockOf(again) === undefined) throw again
        throw new Error(`sluice: the Redis clock moved by more than a calendar period during one call (${again})`)
      })
    })
  }

  /** One EVALSHA (and an EVAL after NOSCRIPT), with calendar boundaries around `aroundMs`. */
  private send(
    plan: Plan,
    redisKeys: readonly string[],
    cost: number,
    mode: Mode,
    aroundMs: number,
    replied: (() => void) | undefined,
  ) {
    const { script, ruleArgs, ruleCount } = plan
    const keys = plan.blocks.length === 0 ? redisKeys : [...redisKeys, ...blockKeys(plan, redisKeys)]
    const args: (string | number)[] = keys.slice()
    if (this.clock === undefined) args.push(mode, '', 0, cost)
    else args.push(mode, Math.floor(this.clock()), EXPLICIT_CLOCK_TTL_SLACK_MS, cost)
    for (let i = 0; i < ruleArgs.length; i++) {
      const arg = ruleArgs[i] as string | CalendarPeriod
      if (typeof arg === 'string') args.push(arg)
      else args.push(...arg.boundariesAround(aroundMs))
    }
    return this.client.evalsha(script.sha, keys.length, ...args).then(
      (reply) => parseReply(reply, ruleCount),
      (error: unknown) => {
        if (errorCode(error) !== 'NOSCRIPT') throw error
        replied?.()
        return this.client.eval(script.source, keys.length, ...args).then((reply) => parseReply(reply, ruleCount))
      },
    )
  }

  /**
   * Asks whether Redis decides for the slot of `redisKey` again: one small write, on `sluice:probe:` and the key's hash
   * tag (no rule's key looks like that: a rule's key has its algorithm's code before the tag).
   */
  probe(redisKey: string): Promise<unknown> {
    return this.client.eval(PROBE, 1, `sluice:probe:${redisKey.slice(redisKey.indexOf('{'))}`)
  }
}

/** The Redis time of a 'SLUICE_CLOCK <ms>' error reply (see main.lua), or undefined for any other error. */
function redisClockOf(error: unknown): number | undefined {
  if (!(error instanceof Error) || !error.message.startsWith('SLUICE_CLOCK ')) return undefined
  const ms = Number(error.message.slice('SLUICE_CLOCK '.length))
  return Number.isSafeInteger(ms) ? ms : undefined
}

/** The script's reply, one array per rule: allowed (1 | 0), remaining, reset_ms, retry_after_ms (-1 = never), delay_ms. */
function parseReply(reply: unknown, ruleCount: number): Outcome[] {
  if (!Array.isArray(reply) || reply.length !== ruleCount) throw unexpected(reply)
  const outcomes: Outcome[] = []
  for (let i = 0; i < ruleCount; i++) {
    const fields: unknown = reply[i]
    if (!Array.isArray(fields) || fields.length !== FIELDS_PER_REPLY) throw unexpected(reply)
    const retryAfterMs = Number(fields[3])
    outcomes.push({
      allowed: fields[0] === 1,
      remaining: Number(fields[1]),
      resetMs: Number(fields[2]),
      retryAfterMs: retryAfterMs === -1 ? Number.POSITIVE_INFINITY : retryAfterMs,
      delayMs: Number(fields[4]),
    })
  }
  return outcomes
}

function unexpected(reply: unknown): Error {
  return new Error(`sluice: unexpected reply from the Redis script: ${JSON.stringify(reply)}`)
}
