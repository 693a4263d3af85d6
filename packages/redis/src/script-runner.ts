import { Batches, MAX_BATCH_REQUESTS, type ScriptOutcome } from './batch'
import type { StoreClient } from './client'
import { BACKSTOP_TIMEOUTS, DEFAULT_TIMEOUT_MS } from './deadlines'
import { errorCode, redisTimeOf } from './errors'
import { RedisClock } from './redis-clock'
import { blockKeys, type Mode, type RuleSet } from './rule-set'
import type { Script } from './script'

// With an explicit clock the trace's time need not follow the wall clock: a key must outlive its logical expiry
// by this much real time, so Redis never drops state the trace still holds (the script checks the logical expiry).
const EXPLICIT_CLOCK_TTL_SLACK_MS = 3_600_000

// The probe of a node that failed: a write, so that a node that reads but cannot write (OOM, READONLY, MISCONF) is
// not taken for recovered, on a key of its own that expires at once, in the slot of the key that failed.
const PROBE = "redis.call('SET', KEYS[1], '1', 'PX', 1000) return 1"

/**
 * Runs the scripts: the calls of one turn of the event loop coalesced into one EVALSHA (one per slot on a Cluster, see
 * `Batches`); after a Redis restart or SCRIPT FLUSH (NOSCRIPT, also when ioredis Cluster wraps it in "Too many Cluster
 * redirections"), one EVAL that loads the script again and runs it. `clock` is the tests' replay clock; without it the
 * script reads Redis's TIME.
 *
 * @example
 * const outcomes = await new ScriptRunner(client, undefined).run(ruleSet, ['sluice:default:sw:{42}'], 1, 'charge')
 */
export class ScriptRunner {
  private readonly batches: Batches

  constructor(
    private readonly client: Pick<StoreClient, 'evalsha' | 'eval'>,
    private readonly clock: (() => number) | undefined,
    cluster = false,
    /** How long after its send Redis may still run a call (the store's backstop); later, the call changes nothing. */
    lateMs = BACKSTOP_TIMEOUTS * DEFAULT_TIMEOUT_MS,
    /** Whether the calls of one turn share a script call (the store's `coalesce`). */
    coalesce = true,
  ) {
    const extraTtlMs = clock === undefined ? 0 : EXPLICIT_CLOCK_TTL_SLACK_MS
    const maxRequests = coalesce ? MAX_BATCH_REQUESTS : 1
    this.batches = new Batches(this.send, cluster, extraTtlMs, new RedisClock(lateMs), maxRequests)
  }

  /**
   * One call of the rules of `ruleSet` on `redisKeys`, in the batch of this turn. `resent` is told when the call is sent again
   * because Redis answered (NOSCRIPT: the call goes on with the reload; SLUICELATE: with a new deadline) and answers
   * whether the call is still waited for; without it, a call Redis ran past its deadline fails.
   */
  run(
    ruleSet: RuleSet,
    redisKeys: readonly string[],
    cost: number,
    mode: Mode,
    resent?: () => boolean,
  ): Promise<ScriptOutcome[]> {
    const instantMs = this.clock === undefined ? Date.now() : Math.floor(this.clock())
    const sent = this.decide(ruleSet, redisKeys, cost, mode, instantMs, resent)
    if (!ruleSet.calendar) return sent
    // The Redis clock is more than a period away from this instance's: ask again around the Redis time. A second
    // such answer (the Redis clock jumped by a period within one round trip) is an error, never a guess.
    return sent.catch((error: unknown) => {
      const redisMs = redisTimeOf(error, 'SLUICE_CLOCK')
      if (redisMs === undefined) throw error
      return this.decide(ruleSet, redisKeys, cost, mode, redisMs, resent).catch((again: unknown) => {
        if (redisTimeOf(again, 'SLUICE_CLOCK') === undefined) throw again
        throw new Error(`sluice: the Redis clock moved by more than a calendar period during one call (${again})`)
      })
    })
  }

  /** One request in this turn's batch, with calendar boundaries around `aroundMs`. */
  private decide(
    ruleSet: RuleSet,
    redisKeys: readonly string[],
    cost: number,
    mode: Mode,
    aroundMs: number,
    resent: (() => boolean) | undefined,
  ): Promise<ScriptOutcome[]> {
    const keys = ruleSet.blocks.length === 0 ? redisKeys : [...redisKeys, ...blockKeys(ruleSet, redisKeys)]
    const now = this.clock === undefined ? '' : Math.floor(this.clock())
    return this.batches.add(ruleSet, keys, cost, mode, now, aroundMs, resent)
  }

  /** The one place a script call is sent: EVALSHA, and after NOSCRIPT one EVAL with the script's text. */
  private readonly send = (
    script: Script,
    keys: readonly string[],
    args: readonly (string | number)[],
    replied: () => void,
  ): Promise<unknown> => {
    return this.client.evalsha(script.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (errorCode(error) !== 'NOSCRIPT') throw error
      replied()
      return this.client.eval(script.source, keys.length, ...keys, ...args)
    })
  }

  /**
   * Asks whether Redis decides for the slot of `redisKey` again: one small write, on `sluice:probe:` and the key's hash
   * tag (no rule's key looks like that: a rule's key has its algorithm's code before the tag).
   */
  probe(redisKey: string): Promise<unknown> {
    return this.client.eval(PROBE, 1, `sluice:probe:${redisKey.slice(redisKey.indexOf('{'))}`)
  }
}
