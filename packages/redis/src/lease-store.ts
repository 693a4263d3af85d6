import { createHash } from 'node:crypto'
import { type FailurePolicy, type Logger, type StoreKeyError, StoreUnavailableError } from '@sluice/core'
import {
  checkFunction,
  checkLogger,
  checkObject,
  checkOneOf,
  checkTimerMs,
  type LeaseOutcome,
  type LeaseScope,
  type LeaseStore,
  warnEach,
} from '@sluice/core/store'
import { type IoredisClient, type NodeRedisClient, type StoreClient, storeClientOf } from './client'
import { BACKSTOP_TIMEOUTS, DEFAULT_TIMEOUT_MS, Deadlines } from './deadlines'
import { errorCode, keyProblem, reachOf } from './errors'
import { KeyErrors } from './key-errors'
import { escapeKey, escapePrefix } from './keys'
import { LocalLeases } from './local-leases'
import leaseSource from './lua/lease.lua'

/**
 * The client the lease store uses: an ioredis `Redis` or `Cluster`, or a node-redis client or cluster (it calls
 * `evalsha`, node-redis's `evalSha`, and `eval`).
 *
 * @example
 * const client: RedisLeaseClient = new Redis()
 * const other: RedisLeaseClient = await createClient({ disableOfflineQueue: true }).connect()
 */
export type RedisLeaseClient = IoredisClient | NodeRedisClient

/**
 * Options of {@link RedisLeaseStore}.
 *
 * @example
 * const options: RedisLeaseStoreOptions = { client: new Redis(), timeout: 100, onError: 'local' }
 */
export interface RedisLeaseStoreOptions {
  client: RedisLeaseClient
  /** The longest a call may wait for Redis, in ms. Default 100. */
  timeout?: number
  /**
   * When Redis fails: `'local'` (default) counts slots in this instance's memory until Redis answers again;
   * `'open'` admits; `'closed'` throws `StoreUnavailableError` (the HTTP adapters answer 503).
   */
  onError?: FailurePolicy
  /**
   * Gets one warning per outage and one info line per recovery, and one error per Redis key that holds something
   * other than a lease table. Default `console`.
   */
  logger?: Logger
  /** Tests only: the time in ms, sent to the script instead of the Redis server's TIME. */
  clock?: () => number
}

const SCRIPT = { source: leaseSource, sha: createHash('sha1').update(leaseSource).digest('hex') }
const POLICIES: readonly FailurePolicy[] = ['local', 'open', 'closed']
// With an explicit clock the leases' times need not follow the wall clock: the tables outlive them by this much.
const EXPLICIT_CLOCK_TTL_SLACK_MS = 3_600_000
// The most lease keys remembered as logged for holding something else: a flood of them cannot grow memory.
const LOGGED_KEY_ERRORS = 1000
// While slots granted in memory are not in Redis yet, how often they are offered to it (as RedisStore probes).
const LOCAL_WRITE_INTERVAL_MS = 250

/**
 * Concurrency leases in Redis, shared by every instance: a lease per request in flight, taken by one atomic script
 * (`lease.lua`) on the Redis clock, so instances together never hold more than the limit. A lease expires
 * `lease` after it was taken or last renewed: the limiter renews the leases of its requests in flight, so only the
 * leases of a crashed instance run out. Every table gets an expiry in the same script that writes it.
 *
 * On a Cluster a limiter's tables share a hash tag: the key's alone, or, with a global limit, one tag for all its
 * tables (every request touches the global table anyway).
 *
 * Redis may lose leases (a restart, FLUSHALL, a failover to a replica that had not got them, an eviction): a renewal
 * takes a missing lease again, even in a full table, so once the holders have renewed, every request in flight is
 * counted and nobody is admitted until the count is back below the limit. Slots granted in memory during an outage
 * are written to Redis before it decides anything else. A table's key that holds something else fails the calls on
 * that key alone with a `StoreKeyError`, logged once: it is no outage.
 *
 * @example
 * import Redis from 'ioredis'
 * import { createConcurrencyLimiter } from '@sluice/core'
 * import { RedisLeaseStore } from '@sluice/redis'
 *
 * const inFlight = createConcurrencyLimiter({ limit: 30, lease: '30s', store: new RedisLeaseStore({ client: new Redis() }) })
 */
export class RedisLeaseStore implements LeaseStore {
  private readonly client: StoreClient
  private readonly deadlines: Deadlines
  private readonly onError: FailurePolicy
  private readonly logger: Logger
  private readonly clock: (() => number) | undefined
  private readonly keyErrors: KeyErrors
  private local: LocalLeases | undefined
  /** The write of the local slots to Redis under way, which acquires wait for. */
  private writing: Promise<void> | undefined
  private writeTimer: ReturnType<typeof setTimeout> | undefined
  private failing = false

  constructor(options: RedisLeaseStoreOptions) {
    checkObject(options, 'options', 'with a client')
    const { timeout = DEFAULT_TIMEOUT_MS, onError = 'local', logger = console, clock } = options
    const client = storeClientOf(options.client)
    checkTimerMs(timeout, 'timeout', { unit: 'milliseconds' })
    checkOneOf(onError, 'onError', POLICIES)
    checkLogger(logger)
    checkFunction(clock, 'clock')
    this.client = client
    this.deadlines = new Deadlines({ timeoutMs: timeout, backstopMs: BACKSTOP_TIMEOUTS * timeout })
    this.onError = onError
    this.logger = logger
    this.clock = clock
    this.keyErrors = new KeyErrors(logger, LOGGED_KEY_ERRORS, 'concurrency limiter', 'the key is deleted or expires')
  }

  async acquire(scope: LeaseScope, key: string, holder: string): Promise<LeaseOutcome> {
    try {
      // Redis must count the slots this instance granted while it was down before it admits anyone else.
      if (this.local?.pending === true) await this.writeLocal()
      const reply = await this.run(scope, key, 'acquire', [holder, ...scope.limits.map(String)])
      return parseOutcome(reply, scope.limits.length)
    } catch (error) {
      if (reachOf(error) === 'key') throw this.keyFailed(error, scope, key)
      this.failed(error)
      if (this.onError === 'closed') throw new StoreUnavailableError('sluice: Redis is unavailable', { cause: error })
      if (this.onError === 'open') return { allowed: true, inFlight: scope.limits.map(() => 0) }
      this.local ??= new LocalLeases()
      const outcome = this.local.acquire(scope, key, holder)
      if (outcome.allowed) this.armLocalWrite()
      return outcome
    }
  }

  async renew(scope: LeaseScope, key: string, holders: readonly string[]): Promise<void> {
    await this.run(scope, key, 'renew', holders).catch((error: unknown) => this.callFailed(error, scope, key))
  }

  async release(scope: LeaseScope, key: string, holder: string): Promise<void> {
    // A lease taken locally during an outage is given back there; one in Redis expires anyway if this fails.
    this.local?.release(scope, key, holder)
    await this.run(scope, key, 'release', [holder]).catch((error: unknown) => this.callFailed(error, scope, key))
  }

  /** Writes the slots granted locally and still held to Redis, as renewals (which take a missing lease again). */
  private writeLocal(): Promise<void> {
    const local = this.local as LocalLeases
    this.writing ??= local
      .writeTo((scope, key, holders) =>
        this.run(scope, key, 'renew', holders).then(
          () => undefined,
          (error: unknown) => {
            // A table that went bad meanwhile keeps its slots in memory alone; its own calls report it.
            if (reachOf(error) !== 'key') throw error
            this.keyFailed(error, scope, key)
          },
        ),
      )
      .finally(() => {
        this.writing = undefined
      })
    return this.writing
  }

  /**
   * Offers the local slots to Redis every `LOCAL_WRITE_INTERVAL_MS` until it has them all, so that Redis counts them
   * soon after it is back even if this instance has no request to make (another instance's would be admitted).
   */
  private armLocalWrite(): void {
    if (this.writeTimer !== undefined) return
    this.writeTimer = setTimeout(() => {
      this.writeLocal()
        .catch((error: unknown) => this.failed(error))
        .finally(() => {
          this.writeTimer = undefined
          if (this.local?.pending === true) this.armLocalWrite()
        })
    }, LOCAL_WRITE_INTERVAL_MS)
    this.writeTimer.unref()
  }

  /** One EVALSHA; after a Redis restart or SCRIPT FLUSH, one EVAL that loads the script again. */
  private async run(scope: LeaseScope, key: string, mode: string, rest: readonly string[]): Promise<unknown> {
    const keys = leaseKeys(scope, key)
    const args: (string | number)[] = [...keys, mode]
    if (this.clock === undefined) args.push('', scope.leaseMs, 0)
    else args.push(Math.floor(this.clock()), scope.leaseMs, EXPLICIT_CLOCK_TTL_SLACK_MS)
    args.push(...rest)
    const reply = await this.deadlines.run(() =>
      this.client.evalsha(SCRIPT.sha, keys.length, ...args).catch((error: unknown) => {
        if (errorCode(error) !== 'NOSCRIPT') throw error
        return this.client.eval(SCRIPT.source, keys.length, ...args)
      }),
    )
    if (this.failing) {
      this.failing = false
      this.logger.info?.('sluice: Redis answers the lease store again')
    }
    return reply
  }

  /** A renewal or a release that failed: a key of its own (logged once), or Redis (logged once per outage). */
  private callFailed(error: unknown, scope: LeaseScope, key: string): void {
    if (reachOf(error) === 'key') this.keyFailed(error, scope, key)
    else this.failed(error)
  }

  /** The error of a call whose table (the script names it) holds something else; logged once per Redis key. */
  private keyFailed(error: unknown, scope: LeaseScope, key: string): StoreKeyError {
    const keys = leaseKeys(scope, key)
    const redisKey = keys[Math.min(keys.length - 1, keyProblem(error).index)] as string
    // The global table (the last key of a global scope) holds every key's leases and names none: it is named as it is.
    return scope.global && redisKey === keys[keys.length - 1]
      ? this.keyErrors.failed(error, scope, 'every key (the global table)', redisKey, 'raw')
      : this.keyErrors.failed(error, scope, key, redisKey)
  }

  private failed(error: unknown): void {
    if (this.failing) return
    this.failing = true
    warnEach(
      this.logger,
      'SLUICE_REDIS_LEASE_STORE_FAILED',
      `sluice: the Redis lease store failed (${error instanceof Error ? error.message : String(error)}); ` +
        `${{ local: 'counting slots in local memory', open: 'admitting', closed: 'rejecting' }[this.onError]} until it answers`,
    )
  }
}

/** The script's SHA1, for the test that SCRIPT LOAD agrees. */
export const LEASE_SCRIPT_SHA = SCRIPT.sha

/**
 * The Redis keys of a call, in the order of `scope.limits`: `prefix:name:cc:{key}` for a per-key limiter;
 * with a global limit `prefix:name:cg:{global}:key` and `prefix:name:cg:{global}`, one hash tag for all.
 */
export function leaseKeys(scope: LeaseScope, key: string): string[] {
  const base = `${escapePrefix(scope.prefix)}:${scope.name}`
  if (!scope.global) return [`${base}:cc:{${escapeKey(key)}}`]
  const global = `${base}:cg:{global}`
  return scope.limits.length === 2 ? [`${global}:${escapeKey(key)}`, global] : [global]
}

function parseOutcome(reply: unknown, tables: number): LeaseOutcome {
  if (!Array.isArray(reply) || reply.length !== tables + 1) {
    throw new Error(`sluice: unexpected reply from the lease script: ${JSON.stringify(reply)}`)
  }
  return { allowed: reply[0] === 1, inFlight: reply.slice(1).map(Number) }
}
