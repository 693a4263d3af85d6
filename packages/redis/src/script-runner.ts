import type { CompiledRule, Outcome } from '@sluice/core/store'
import type { Redis } from 'ioredis'
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

/**
 * Runs the scripts: one EVALSHA per call; after a Redis restart or SCRIPT FLUSH (NOSCRIPT), one EVAL that loads
 * the script again and runs it. `clock` is the tests' replay clock; without it the script reads Redis's TIME.
 *
 * @example
 * const outcomes = await new ScriptRunner(client, undefined).run(plan, ['sluice:default:sw:{42}'], 1, 'charge')
 */
export class ScriptRunner {
  constructor(
    private readonly client: Pick<Redis, 'evalsha' | 'eval'>,
    private readonly clock: (() => number) | undefined,
  ) {}

  run(plan: Plan, redisKeys: readonly string[], cost: number, mode: Mode): Promise<Outcome[]> {
    const { script, ruleArgs, ruleCount } = plan
    const args: (string | number)[] = redisKeys.slice()
    if (this.clock === undefined) args.push(mode, '', 0, cost)
    else args.push(mode, Math.floor(this.clock()), EXPLICIT_CLOCK_TTL_SLACK_MS, cost)
    for (let i = 0; i < ruleArgs.length; i++) args.push(ruleArgs[i] as string)
    return this.client.evalsha(script.sha, redisKeys.length, ...args).then(
      (reply) => parseReply(reply, ruleCount),
      (error: unknown) => {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error
        return this.client.eval(script.source, redisKeys.length, ...args).then((reply) => parseReply(reply, ruleCount))
      },
    )
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
