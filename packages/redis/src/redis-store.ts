import {
  algorithms,
  type CompiledRule,
  describeValue as describe,
  InvalidOptionError,
  MemoryStore,
  type Outcome,
  type Store,
  StoreUnavailableError,
} from '@sluice/core'
import type { Redis } from 'ioredis'
import { Deadlines } from './deadlines'
import { redisKey } from './keys'
import { type Script, scriptFor } from './script'
import { keySlot } from './slot'

/**
 * The part of an ioredis client the store uses. A `Redis` and a `Cluster` both fit; `isCluster` (which both
 * carry) tells the store to split stacked rules by slot.
 *
 * @example
 * const client: RedisStoreClient = new Cluster([{ host: '10.0.0.5', port: 7000 }])
 */
export type RedisStoreClient = Pick<Redis, 'evalsha' | 'eval' | 'ping' | 'del'> & { readonly isCluster?: boolean }

/**
 * What the store does when Redis does not answer in time or answers with an error.
 *
 * @example
 * const policy: FailurePolicy = process.env.NODE_ENV === 'production' ? 'local' : 'closed'
 */
export type FailurePolicy = 'local' | 'open' | 'closed'

/**
 * Where outages and recoveries are reported, once each.
 *
 * @example
 * const logger: RedisStoreLogger = { warn: (m) => pino.warn(m), info: (m) => pino.info(m) }
 */
export interface RedisStoreLogger {
  warn(message: string): void
  info(message: string): void
}

/**
 * Options of {@link RedisStore}.
 *
 * @example
 * const options: RedisStoreOptions = { client: new Redis(), timeout: 50, onError: 'closed' }
 */
export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster` (or anything with the same `evalsha`, `eval`, `ping` and `del`). */
  client: RedisStoreClient
  /** The longest a call may wait for Redis, in ms, before the failure policy answers. Default 100. */
  timeout?: number
  /**
   * When Redis fails: `'local'` (default) decides from a per-instance MemoryStore with the same rules until Redis
   * answers again; `'open'` admits; `'closed'` throws `StoreUnavailableError` (the HTTP adapters answer 503).
   */
  onError?: FailurePolicy
  /** Gets one warning per outage and one info line per recovery. Default `console`. */
  logger?: RedisStoreLogger
  /** During an outage, how often one PING checks whether Redis is back, in ms. Default 250. */
  probeIntervalMs?: number
  /** Rejected keys remembered for the local short-circuit; 0 turns it off. Default 10 000. */
  shortCircuitMaxKeys?: number
  /** The bound of the local fallback MemoryStore (`onError: 'local'`). Default 100 000. */
  localMaxKeys?: number
  /**
   * Tests only: the time in ms, sent to the script instead of the Redis server's TIME, so a MemoryStore and a
   * RedisStore can replay one trace. Also the clock of the short-circuit and of the local fallback.
   */
  clock?: () => number
}

interface Rejection {
  /** Local time until which the same rules and keys are rejected without asking Redis. */
  readonly until: number
  /** The smallest cost this rejection covers. */
  readonly cost: number
  /** Local time of the reply. */
  readonly at: number
  readonly outcomes: readonly Outcome[]
}

type Mode = 'charge' | 'peek' | 'refund'

/** What every call for one list of rules sends alike, worked out once per list. */
interface Plan {
  readonly rules: readonly CompiledRule[]
  /** The script with exactly the algorithms of these rules. */
  readonly script: Script
  /** Per rule: algorithm code, limit, window_ms, rate_numerator, rate_denominator, as the script reads them. */
  readonly ruleArgs: readonly string[]
}

const POLICIES: readonly FailurePolicy[] = ['local', 'open', 'closed']
// With an explicit clock the trace's time need not follow the wall clock: a key must outlive its logical expiry
// by this much real time, so Redis never drops state the trace still holds (the script checks the logical expiry).
const EXPLICIT_CLOCK_TTL_SLACK_MS = 3_600_000
const FIELDS_PER_RULE = 5
// The limiter passes the same rules array on every call: plans are kept per array (and per single rule for
// applyOne), so a call builds no script, hash or number-to-string conversion of its own.
const plans = new WeakMap<readonly CompiledRule[], Plan>()
const singlePlans = new WeakMap<CompiledRule, Plan>()

function planFor(rules: readonly CompiledRule[]): Plan {
  let plan = plans.get(rules)
  if (plan === undefined) {
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
    plan = { rules, script: scriptFor(rules.map((rule) => rule.algorithmCode)), ruleArgs }
    plans.set(rules, plan)
  }
  return plan
}

function singlePlanFor(rule: CompiledRule): Plan {
  let plan = singlePlans.get(rule)
  if (plan === undefined) {
    plan = planFor([rule])
    singlePlans.set(rule, plan)
  }
  return plan
}

/**
 * A store that keeps the limits in Redis, shared by every instance: each request is one EVALSHA of a Lua script
 * that runs the same algorithms as the core, on the Redis server's clock, all rules at once and all or nothing.
 *
 * On a Cluster, the rules of one request whose keys share a slot are still one call; rules in different slots are
 * called per slot, and when one slot rejects, the slots that admitted are refunded.
 *
 * When Redis fails or takes longer than `timeout`, `onError` answers, and the store asks Redis again with a PING
 * every `probeIntervalMs` (only while requests arrive); the outage and the recovery are logged once each.
 *
 * A key that Redis rejected until T is rejected locally, with no round trip, until T (by this instance's clock at
 * the time of the reply) for the same or a higher cost.
 *
 * @example
 * import Redis from 'ioredis'
 * import { createLimiter } from '@sluice/core'
 * import { RedisStore } from '@sluice/redis'
 *
 * const store = new RedisStore({ client: new Redis(), timeout: 100, onError: 'local' })
 * const limiter = createLimiter({ limit: 100, window: '1m', store })
 * const decision = await limiter.consume('user:42')
 */
export class RedisStore implements Store {
  readonly timeout: number
  readonly onError: FailurePolicy
  private readonly client: RedisStoreClient
  private readonly cluster: boolean
  private readonly logger: RedisStoreLogger
  private readonly probeIntervalMs: number
  private readonly shortCircuitMaxKeys: number
  private readonly localMaxKeys: number
  private readonly clock: (() => number) | undefined
  private readonly rejected = new Map<string, Rejection>()
  private readonly deadlines: Deadlines
  private local: MemoryStore | undefined
  /** Wall-clock ms when the current outage began; undefined while Redis answers. */
  private outageSince: number | undefined
  private lastError: unknown
  private nextProbeAt = 0
  private probing = false
  private closed = false

  constructor(options: RedisStoreOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionError('options', `must be an object with a client (got ${describe(options)})`)
    }
    const {
      client,
      timeout = 100,
      onError = 'local',
      logger = console,
      probeIntervalMs = 250,
      shortCircuitMaxKeys = 10_000,
      localMaxKeys = 100_000,
      clock,
    } = options
    if (
      client === null ||
      typeof client !== 'object' ||
      !(['evalsha', 'eval', 'ping', 'del'] as const).every((method) => typeof client[method] === 'function')
    ) {
      throw new InvalidOptionError(
        'client',
        `must be an ioredis Redis or Cluster (with evalsha, eval, ping and del) (got ${describe(client)})`,
      )
    }
    if (typeof timeout !== 'number' || !Number.isSafeInteger(timeout) || timeout < 1) {
      throw new InvalidOptionError(
        'timeout',
        `must be a positive whole number of milliseconds (got ${describe(timeout)})`,
      )
    }
    if (!POLICIES.includes(onError)) {
      throw new InvalidOptionError(
        'onError',
        `must be one of ${POLICIES.map((p) => `'${p}'`).join(', ')} (got ${describe(onError)})`,
      )
    }
    if (
      logger === null ||
      typeof logger !== 'object' ||
      typeof logger.warn !== 'function' ||
      typeof logger.info !== 'function'
    ) {
      throw new InvalidOptionError('logger', `must have warn() and info() methods (got ${describe(logger)})`)
    }
    if (typeof probeIntervalMs !== 'number' || !Number.isSafeInteger(probeIntervalMs) || probeIntervalMs < 1) {
      throw new InvalidOptionError(
        'probeIntervalMs',
        `must be a positive whole number of milliseconds (got ${describe(probeIntervalMs)})`,
      )
    }
    if (
      typeof shortCircuitMaxKeys !== 'number' ||
      !Number.isSafeInteger(shortCircuitMaxKeys) ||
      shortCircuitMaxKeys < 0
    ) {
      throw new InvalidOptionError(
        'shortCircuitMaxKeys',
        `must be a whole number, 0 to turn the short-circuit off (got ${describe(shortCircuitMaxKeys)})`,
      )
    }
    if (typeof localMaxKeys !== 'number' || !Number.isSafeInteger(localMaxKeys) || localMaxKeys < 1) {
      throw new InvalidOptionError('localMaxKeys', `must be a positive whole number (got ${describe(localMaxKeys)})`)
    }
    if (clock !== undefined && typeof clock !== 'function') {
      throw new InvalidOptionError('clock', `must be a function returning milliseconds (got ${describe(clock)})`)
    }
    this.client = client
    this.cluster = client.isCluster === true
    this.timeout = timeout
    this.deadlines = new Deadlines(timeout)
    this.onError = onError
    this.logger = logger
    this.probeIntervalMs = probeIntervalMs
    this.shortCircuitMaxKeys = shortCircuitMaxKeys
    this.localMaxKeys = localMaxKeys
    this.clock = clock
  }

  /** False from the first failed call until a probe gets an answer again. */
  get available(): boolean {
    return this.outageSince === undefined
  }

  async apply(
    rules: readonly CompiledRule[],
    keys: readonly string[],
    cost: number,
    charge: boolean,
  ): Promise<readonly Outcome[]> {
    this.assertOpen()
    const redisKeys = rules.map((rule, i) => redisKey(rule, keys[i] as string))
    // Every Redis key ends with its only unescaped '}', so joining them without a separator is injective.
    return this.decide(rules, keys, redisKeys, redisKeys.join(''), cost, charge)
  }

  /** The same as `apply([rule], [key], cost, charge)`, for the limiter's single-rule path. */
  async applyOne(rule: CompiledRule, key: string, cost: number, charge: boolean): Promise<Outcome> {
    this.assertOpen()
    const { rules } = singlePlanFor(rule)
    const theKey = redisKey(rule, key)
    return (await this.decide(rules, [key], [theKey], theKey, cost, charge))[0] as Outcome
  }

  private async decide(
    rules: readonly CompiledRule[],
    keys: readonly string[],
    redisKeys: readonly string[],
    rejectionKey: string,
    cost: number,
    charge: boolean,
  ): Promise<readonly Outcome[]> {
    const shortCircuit = this.shortCircuitMaxKeys > 0
    if (shortCircuit) {
      const known = this.knownRejection(rejectionKey, cost)
      if (known !== undefined) return known
    }
    if (this.outageSince !== undefined) {
      this.probe()
      return this.fallback(rules, keys, cost, charge)
    }
    let outcomes: readonly Outcome[]
    try {
      outcomes = await this.deadlines.run(() => this.evaluate(rules, redisKeys, cost, charge ? 'charge' : 'peek'))
    } catch (error) {
      this.failed(error)
      return this.fallback(rules, keys, cost, charge)
    }
    if (shortCircuit) this.remember(rejectionKey, cost, outcomes)
    return outcomes
  }

  async refund(rules: readonly CompiledRule[], keys: readonly string[], cost: number): Promise<void> {
    this.assertOpen()
    const redisKeys = rules.map((rule, i) => redisKey(rule, keys[i] as string))
    this.rejected.delete(redisKeys.join(''))
    if (await this.onRedis(() => this.bySlot(rules, redisKeys, (r, k) => this.run(r, k, cost, 'refund')))) return
    if (this.onError === 'closed') throw this.unavailable()
    if (this.onError === 'local') this.localStore().refund(rules, keys, cost)
  }

  async reset(rules: readonly CompiledRule[], keys: readonly string[]): Promise<void> {
    this.assertOpen()
    const redisKeys = rules.map((rule, i) => redisKey(rule, keys[i] as string))
    this.rejected.delete(redisKeys.join(''))
    this.local?.reset(rules, keys)
    if (await this.onRedis(() => this.bySlot(rules, redisKeys, async (_, k) => [await this.client.del(...k)]))) return
    if (this.onError === 'closed') throw this.unavailable()
  }

  /**
   * Forgets the short-circuit and the local fallback state. The client is yours: quit it yourself. The store's only
   * timer, for the calls' deadlines, is unref'd and stops on its own once no call is waiting.
   */
  close(): void {
    this.closed = true
    this.rejected.clear()
    this.local?.clear()
    this.local = undefined
  }

  /** One EVALSHA for all the rules, or on a Cluster one per slot, with refunds when a slot rejects. */
  private evaluate(
    rules: readonly CompiledRule[],
    redisKeys: readonly string[],
    cost: number,
    mode: Mode,
  ): Promise<readonly Outcome[]> {
    if (!this.cluster || rules.length === 1) return this.run(rules, redisKeys, cost, mode)
    return this.evaluateBySlot(rules, redisKeys, cost, mode)
  }

  private async evaluateBySlot(
    rules: readonly CompiledRule[],
    redisKeys: readonly string[],
    cost: number,
    mode: Mode,
  ): Promise<readonly Outcome[]> {
    const groups = groupBySlot(redisKeys)
    if (groups.length === 1) return this.run(rules, redisKeys, cost, mode)
    const outcomes: Outcome[] = new Array(rules.length)
    const answers = await Promise.all(
      groups.map((group) => this.run(pick(rules, group), pick(redisKeys, group), cost, mode)),
    )
    groups.forEach((group, g) => {
      group.forEach((i, j) => {
        outcomes[i] = (answers[g] as Outcome[])[j] as Outcome
      })
    })
    if (mode !== 'charge' || outcomes.every((outcome) => outcome.allowed)) return outcomes
    // A slot rejected, so nothing may stay charged: give the cost back to the slots that charged it. Between the
    // charge and the refund (one round trip) those keys hold the cost, which can reject another request then.
    await Promise.all(
      groups.map(async (group, g) => {
        if (!(answers[g] as Outcome[]).every((outcome) => outcome.allowed)) return // this slot charged nothing
        const refunded = await this.run(pick(rules, group), pick(redisKeys, group), cost, 'refund')
        // After the refund the key is as before: its numbers are the uncharged view evaluateRules reports.
        group.forEach((i, j) => {
          outcomes[i] = { ...(refunded[j] as Outcome), allowed: true, retryAfterMs: 0, delayMs: 0 }
        })
      }),
    )
    return outcomes
  }

  /** Runs `call` once per slot on a Cluster (once in all on a single Redis), in the order of the rules. */
  private async bySlot<T>(
    rules: readonly CompiledRule[],
    redisKeys: readonly string[],
    call: (rules: readonly CompiledRule[], redisKeys: string[]) => Promise<readonly T[]>,
  ): Promise<void> {
    if (!this.cluster) {
      await call(rules, [...redisKeys])
      return
    }
    await Promise.all(groupBySlot(redisKeys).map((group) => call(pick(rules, group), pick(redisKeys, group))))
  }

  /**
   * One EVALSHA of the script with exactly these rules' algorithms; after a Redis restart or SCRIPT FLUSH, one EVAL
   * that loads that script again and runs it.
   */
  private run(
    rules: readonly CompiledRule[],
    redisKeys: readonly string[],
    cost: number,
    mode: Mode,
  ): Promise<Outcome[]> {
    const { script, ruleArgs } = planFor(rules)
    const args: (string | number)[] = redisKeys.slice()
    if (this.clock === undefined) args.push(mode, '', 0, cost)
    else args.push(mode, Math.floor(this.clock()), EXPLICIT_CLOCK_TTL_SLACK_MS, cost)
    for (let i = 0; i < ruleArgs.length; i++) args.push(ruleArgs[i] as string)
    const count = rules.length
    return this.client.evalsha(script.sha, redisKeys.length, ...args).then(
      (reply) => parseReply(reply, count),
      (error: unknown) => {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error
        return this.client.eval(script.source, redisKeys.length, ...args).then((reply) => parseReply(reply, count))
      },
    )
  }

  /** Runs `work` on Redis within the timeout, unless Redis is known to be away; false when it was not done. */
  private async onRedis(work: () => Promise<unknown>): Promise<boolean> {
    if (this.outageSince !== undefined) {
      this.probe()
      return false
    }
    try {
      await this.deadlines.run(work)
      return true
    } catch (error) {
      this.failed(error)
      return false
    }
  }

  private fallback(
    rules: readonly CompiledRule[],
    keys: readonly string[],
    cost: number,
    charge: boolean,
  ): readonly Outcome[] {
    if (this.onError === 'closed') throw this.unavailable()
    if (this.onError === 'local') return this.localStore().apply(rules, keys, cost, charge)
    // 'open': admit, with the numbers of a key that has used nothing.
    const now = this.now()
    return rules.map((rule) => algorithms[rule.algorithm](undefined, now, cost, rule, false))
  }

  private failed(error: unknown): void {
    this.lastError = error
    if (this.outageSince !== undefined) return
    this.outageSince = Date.now()
    this.nextProbeAt = this.outageSince + this.probeIntervalMs
    const answer = { local: 'deciding from local memory', open: 'admitting every request', closed: 'rejecting' }[
      this.onError
    ]
    this.logger.warn(`sluice: Redis is unavailable (${message(error)}); ${answer} until it answers again`)
  }

  /** During an outage: one PING at a time, at most every probeIntervalMs, and only while requests come in. */
  private probe(): void {
    if (this.probing || Date.now() < this.nextProbeAt) return
    this.probing = true
    this.deadlines
      .run(() => this.client.ping())
      .then(
        () => {
          this.probing = false
          this.recovered()
        },
        (error: unknown) => {
          this.probing = false
          this.lastError = error
          this.nextProbeAt = Date.now() + this.probeIntervalMs
        },
      )
  }

  private recovered(): void {
    if (this.outageSince === undefined) return
    const lasted = Date.now() - this.outageSince
    this.outageSince = undefined
    this.lastError = undefined
    // The local counts were a stand-in; Redis is the truth again, and the next outage starts afresh.
    this.local?.clear()
    this.logger.info(`sluice: Redis answers again after ${lasted} ms; decisions come from Redis again`)
  }

  private unavailable(): StoreUnavailableError {
    return new StoreUnavailableError(`sluice: Redis is unavailable (${message(this.lastError)})`, {
      cause: this.lastError,
    })
  }

  private localStore(): MemoryStore {
    if (this.local === undefined) {
      const options: { maxKeys: number; clock?: () => number } = { maxKeys: this.localMaxKeys }
      if (this.clock !== undefined) options.clock = this.clock
      this.local = new MemoryStore(options)
    }
    return this.local
  }

  private now(): number {
    return Math.floor(this.clock === undefined ? Date.now() : this.clock())
  }

  private knownRejection(rejectionKey: string, cost: number): readonly Outcome[] | undefined {
    // Most of the time nothing is rejected: then a key is not even hashed.
    if (this.rejected.size === 0) return undefined
    const known = this.rejected.get(rejectionKey)
    if (known === undefined) return undefined
    const now = this.now()
    if (now >= known.until) {
      this.rejected.delete(rejectionKey)
      return undefined
    }
    if (cost < known.cost) return undefined
    const elapsed = now - known.at
    return known.outcomes.map((outcome) => ({
      ...outcome,
      resetMs: Math.max(0, outcome.resetMs - elapsed),
      retryAfterMs: outcome.allowed ? 0 : Math.max(0, outcome.retryAfterMs - elapsed),
    }))
  }

  private remember(rejectionKey: string, cost: number, outcomes: readonly Outcome[]): void {
    let wait = 0
    for (const outcome of outcomes) if (!outcome.allowed) wait = Math.max(wait, outcome.retryAfterMs)
    // A fresh answer replaces what was known; an admitted one (for example a smaller cost) ends the rejection.
    if (this.rejected.size > 0) this.rejected.delete(rejectionKey)
    if (wait <= 0 || !Number.isFinite(wait)) return
    if (this.rejected.size >= this.shortCircuitMaxKeys) {
      const oldest = this.rejected.keys().next()
      if (!oldest.done) this.rejected.delete(oldest.value)
    }
    const now = this.now()
    // retryAfterMs is relative to the script's instant; counting it from the reply's arrival errs on the late side.
    this.rejected.set(rejectionKey, { until: now + wait, cost, at: now, outcomes })
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('sluice: this RedisStore is closed')
  }
}

/** Indexes of the keys, grouped by cluster slot, each group and the groups in the order of the rules. */
function groupBySlot(redisKeys: readonly string[]): number[][] {
  const groups = new Map<number, number[]>()
  redisKeys.forEach((key, i) => {
    const slot = keySlot(key)
    const group = groups.get(slot)
    if (group === undefined) groups.set(slot, [i])
    else group.push(i)
  })
  return [...groups.values()]
}

function pick<T>(items: readonly T[], indexes: readonly number[]): T[] {
  return indexes.map((i) => items[i] as T)
}

function parseReply(reply: unknown, rules: number): Outcome[] {
  if (!Array.isArray(reply) || reply.length !== rules) throw unexpected(reply)
  const outcomes: Outcome[] = []
  for (let i = 0; i < rules; i++) {
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

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
