import { Batches, MAX_BATCH_REQUESTS, type Resent, type ScriptOutcome } from './batch'
import type { StoreClient } from './client'
import { BACKSTOP_TIMEOUTS, DEFAULT_TIMEOUT_MS } from './deadlines'
import { RedisClock } from './redis-clock'
import { blockKeys, type Mode, type RuleSet } from './rule-set'

// With an explicit clock the trace's time need not follow the wall clock: a key must outlive its logical expiry
// by this much real time, so Redis never drops state the trace still holds (the script checks the logical expiry).
const EXPLICIT_CLOCK_TTL_SLACK_MS = 3_600_000

// The probe of a node that failed: a write, so that a node that reads but cannot write (OOM, READONLY, MISCONF) is
// not taken for recovered, on a key of its own that expires at once, in the slot of the key that failed.
const PROBE = "redis.call('SET', KEYS[1], '1', 'PX', 1000) return 1"

/**
 * Runs the scripts: a request's keys (its rules' and their block keys) and its instant, in this turn's batch (one
 * EVALSHA for the calls of one turn of the event loop, one per slot on a Cluster; see `Batches`, which also retries
 * them). `clock` is the tests' replay clock; without it the script reads Redis's TIME.
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
    this.batches = new Batches(client, cluster, extraTtlMs, new RedisClock(lateMs), maxRequests)
  }

  /**
   * One call of the rules of `ruleSet` on `redisKeys`, in the batch of this turn. `resent` is the call's deadline's
   * (see {@link Resent}); without it, a call Redis ran past its deadline fails.
   */
  run(
    ruleSet: RuleSet,
    redisKeys: readonly string[],
    cost: number,
    mode: Mode,
    resent?: Resent,
  ): Promise<ScriptOutcome[]> {
    const aroundMs = this.clock === undefined ? Date.now() : Math.floor(this.clock())
    const keys = ruleSet.blocks.length === 0 ? redisKeys : [...redisKeys, ...blockKeys(ruleSet, redisKeys)]
    const now = this.clock === undefined ? '' : Math.floor(this.clock())
    return this.batches.add(ruleSet, keys, cost, mode, now, aroundMs, resent)
  }

  /**
   * Asks whether Redis decides for the slot of `redisKey` again: one small write, on `sluice:probe:` and the key's hash
   * tag (no rule's key looks like that: a rule's key has its algorithm's code before the tag).
   */
  probe(redisKey: string): Promise<unknown> {
    return this.client.eval(PROBE, 1, `sluice:probe:${redisKey.slice(redisKey.indexOf('{'))}`)
  }
}
