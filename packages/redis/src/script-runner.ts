import type { CompiledRule, Outcome } from '@sluice/core/store'
import type { Redis } from 'ioredis'
import { errorCode } from './errors'
import { type Script, scriptFor } from './script'

/** What a call asks of the script: apply and charge, apply without charging, or give a cost back. */
export type Mode = 'charge' | 'peek' | 'refund'

/** What every call for one list of rules sends alike, worked out once, when a store binds them. */
export interface Plan {
  /** The script with exactly the algorithms of these rules. */
  readonly script: Script
  /** Per rule: algorithm code, limit, window_ms, rate_numerator, rate_denominator, as the script reads them. */
  readonly ruleArgs: readonly string[]
  readonly ruleCount: number
}

/**
 * The plan of a list of rules.
 *
 * @example
 * const plan = planFor(limiter.rules)
 */
export function planFor(rules: readonly CompiledRule[]): Plan {
  const ruleArgs: string[] = []
  for (const rule of rules) {
    ruleArgs.push(
      rule.algorithmCode,
      String(rule.limit),
      String(rule.windowMs),
      String(rule.rateNumerator),
      String(rule.rateDenominator),
    )
  }
  return { script: scriptFor(rules.map((rule) => rule.algorithmCode)), ruleArgs, ruleCount: rules.length }
}

// With an explicit clock the trace's time need not follow the wall clock: a key must outlive its logical expiry
// by this much real time, so Redis never drops state the trace still holds (the script checks the logical expiry).
const EXPLICIT_CLOCK_TTL_SLACK_MS = 3_600_000
const FIELDS_PER_RULE = 5

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
    private readonly client: Pick<Redis, 'evalsha' | 'eval'>,
    private readonly clock: (() => number) | undefined,
  ) {}

  /**
   * One call of `plan`'s script on `redisKeys`. `resent` is told when Redis answered NOSCRIPT and the call is sent
   * again, with the script.
   */
  run(plan: Plan, redisKeys: readonly string[], cost: number, mode: Mode, resent?: () => void): Promise<Outcome[]> {
    const { script, ruleArgs, ruleCount } = plan
    const args: (string | number)[] = redisKeys.slice()
    if (this.clock === undefined) args.push(mode, '', 0, cost)
    else args.push(mode, Math.floor(this.clock()), EXPLICIT_CLOCK_TTL_SLACK_MS, cost)
    for (let i = 0; i < ruleArgs.length; i++) args.push(ruleArgs[i] as string)
    return this.client.evalsha(script.sha, redisKeys.length, ...args).then(
      (reply) => parseReply(reply, ruleCount),
      (error: unknown) => {
        if (errorCode(error) !== 'NOSCRIPT') throw error
        const reload = this.client.eval(script.source, redisKeys.length, ...args)
        resent?.()
        return reload.then((reply) => parseReply(reply, ruleCount))
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

/** The script's reply, one array per rule: allowed (1 | 0), remaining, reset_ms, retry_after_ms (-1 = never), delay_ms. */
function parseReply(reply: unknown, ruleCount: number): Outcome[] {
  if (!Array.isArray(reply) || reply.length !== ruleCount) throw unexpected(reply)
  const outcomes: Outcome[] = []
  for (let i = 0; i < ruleCount; i++) {
    const fields: unknown = reply[i]
    if (!Array.isArray(fields) || fields.length !== FIELDS_PER_RULE) throw unexpected(reply)
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
