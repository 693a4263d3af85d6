import {
  type BindOptions,
  type BoundStore,
  type CompiledRule,
  checkBoolean,
  checkFunction,
  checkLogger,
  checkObject,
  checkOneOf,
  checkTimerMs,
  checkWholeNumber,
  type FailurePolicy,
  KeySpaces,
  type Logger,
  MemoryStore,
  type Store,
} from '@sluice/core/store'
import { RedisBinding, type RedisShared } from './binding'
import { type IoredisClient, type NodeRedisClient, storeClientOf } from './client'
import { warnAboutClientOptions } from './client-options'
import { BACKSTOP_TIMEOUTS, DEFAULT_TIMEOUT_MS } from './deadlines'
import { KeyErrors } from './key-errors'
import { Nodes } from './nodes'
import { REGISTRY_REFRESH_MS, RuleRegistry } from './rule-registry'
import { ScriptRunner } from './script-runner'
import { ShortCircuit } from './short-circuit'

/**
 * The client a store uses: an ioredis `Redis` or `Cluster`, or a node-redis client (`createClient()`) or cluster
 * (`createCluster()`). The store calls only `evalsha` (node-redis: `evalSha`), `eval` and `del`, reads a Cluster's slot
 * map and asks for it again after a master stopped answering; the client's options are checked once.
 *
 * @example
 * const client: RedisStoreClient = new Cluster([{ host: '10.0.0.5', port: 7000 }])
 * const other: RedisStoreClient = await createClient({ disableOfflineQueue: true }).connect()
 */
export type RedisStoreClient = IoredisClient | NodeRedisClient

/**
 * Options of {@link RedisStore}.
 *
 * @example
 * const options: RedisStoreOptions = { client: new Redis(), timeout: 50, onError: 'closed' }
 */
export interface RedisStoreOptions {
  /**
   * An ioredis `Redis` or `Cluster`, or a node-redis client or cluster (anything with the same `evalsha`, `eval` and
   * `del`, or node-redis's `evalSha`, `eval` and `del`). The store warns once when its options let a call the store
   * gave up on reach Redis later (see "Client options" in the README).
   */
  client: RedisStoreClient
  /**
   * How long, in ms, Redis may leave this instance's oldest call unanswered, while this instance is free to read,
   * before its node is declared down and the failure policy answers. Default 100. Time this instance spends busy
   * does not count, and while Redis keeps answering a burst, the burst's calls wait their turn; no call waits longer
   * than 30 times `timeout` of this instance's idle time in all.
   */
  timeout?: number
  /**
   * When Redis fails: `'local'` (default) decides from a per-instance MemoryStore with the same rules until Redis
   * answers again; `'open'` admits; `'closed'` throws `StoreUnavailableError` (the HTTP adapters answer 503).
   */
  onError?: FailurePolicy
  /**
   * Gets one warning per outage of a node and (with an `info` method) one line per recovery, one error per key whose
   * state the script cannot use, and one warning about risky client options. Default `console`.
   */
  logger?: Logger
  /** During an outage, how often one probe (a small write in the slot that failed) asks whether Redis is back, in ms. Default 250. */
  probeIntervalMs?: number
  /** Rejected keys remembered for the local short-circuit; 0 turns it off. Default 10 000. */
  shortCircuitMaxKeys?: number
  /**
   * How long, in ms, the local short-circuit answers a rejection without asking Redis again: the longest a `reset`,
   * a refund or a change of limits made through another instance (or another store) goes unseen here. Default 1000.
   */
  shortCircuitMaxMs?: number
  /** The bound of the local fallback MemoryStore (`onError: 'local'`). Default 100 000. */
  localMaxKeys?: number
  /**
   * Whether the decisions made in one turn of the event loop go to Redis together, as one script call (at most 64
   * each; one call per slot on a Cluster). Default true. `false` sends each decision as its own call the moment it is
   * made: more calls and more Redis time per decision under load, for the same answers.
   */
  coalesce?: boolean
}

/**
 * Tests only (not exported from the package): the time in ms, sent to the script instead of the Redis server's
 * TIME, so a MemoryStore and a RedisStore can replay one trace; also the clock of the short-circuit and of the
 * local fallback.
 */
export interface ReplayOptions extends RedisStoreOptions {
  clock?: () => number
  /** How often the store registers its rules in Redis again (see `RuleRegistry`), in ms, instead of every 30 s. */
  registryRefreshMs?: number
}

/** Tests only: a RedisStore on a replay clock. */
export function replayStore(options: ReplayOptions): RedisStore {
  return new RedisStore(options)
}

// How long the short-circuit trusts a rejection before Redis is asked again: what another instance's reset of a
// blocked key (15 minutes, say) costs this one at most, against one Redis call per second per flooding key.
const DEFAULT_SHORT_CIRCUIT_MAX_MS = 1000

// Poisoned keys remembered as already logged.
const LOGGED_KEY_ERRORS = 1000

// What the requests get during an outage, as the outage's log line says it.
const DURING_OUTAGE: { readonly [policy in FailurePolicy]: string } = {
  local: 'deciding from local memory',
  open: 'admitting every request',
  closed: 'rejecting',
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
 * A key that Redis rejected until T is rejected locally, with no round trip, while Redis would answer it the same,
 * number for number (see "The local short-circuit" in the README), and for `shortCircuitMaxMs` at most.
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
  private readonly shared: RedisShared
  private readonly keySpaces = new KeySpaces()
  private readonly registry: RuleRegistry

  constructor(options: RedisStoreOptions) {
    checkObject(options, 'options', 'with a client')
    const {
      timeout = DEFAULT_TIMEOUT_MS,
      onError = 'local',
      logger = console,
      clock,
      registryRefreshMs = REGISTRY_REFRESH_MS,
    } = options as ReplayOptions
    const client = storeClientOf(options.client)
    this.timeout = checkTimerMs(timeout, 'timeout', { unit: 'milliseconds' })
    this.onError = checkOneOf(onError, 'onError', ['local', 'open', 'closed'] as const)
    const probeIntervalMs = checkWholeNumber(options.probeIntervalMs ?? 250, 'probeIntervalMs', {
      unit: 'milliseconds',
    })
    const shortCircuitMaxKeys = checkWholeNumber(options.shortCircuitMaxKeys ?? 10_000, 'shortCircuitMaxKeys', {
      min: 0,
    })
    const shortCircuitMaxMs = checkWholeNumber(
      options.shortCircuitMaxMs ?? DEFAULT_SHORT_CIRCUIT_MAX_MS,
      'shortCircuitMaxMs',
      {
        unit: 'milliseconds',
      },
    )
    const localMaxKeys = checkWholeNumber(options.localMaxKeys ?? 100_000, 'localMaxKeys')
    const coalesce = checkBoolean(options.coalesce ?? true, 'coalesce')
    checkFunction(clock, 'clock')
    const checkedLogger = checkLogger(logger)
    warnAboutClientOptions(client, this.timeout, checkedLogger)
    const now = clock === undefined ? () => Date.now() : () => Math.floor(clock())
    const lateMs = BACKSTOP_TIMEOUTS * this.timeout
    const runner = new ScriptRunner(client, clock, client.isCluster === true, lateMs, coalesce)
    const refreshMs = checkTimerMs(registryRefreshMs, 'registryRefreshMs', { unit: 'milliseconds' })
    this.registry = new RuleRegistry(client, checkedLogger, refreshMs)
    this.shared = {
      client,
      cluster: client.isCluster,
      onError: this.onError,
      runner,
      nodes: new Nodes(client, {
        timeoutMs: this.timeout,
        backstopMs: BACKSTOP_TIMEOUTS * this.timeout,
        probeIntervalMs,
        logger: checkedLogger,
        onError: this.onError,
        duringOutage: DURING_OUTAGE[this.onError],
        probe: (key) => runner.probe(key),
        newLocal: this.onError === 'local' ? () => new MemoryStore({ maxKeys: localMaxKeys, clock: now }) : undefined,
      }),
      shortCircuit: new ShortCircuit(shortCircuitMaxKeys, shortCircuitMaxMs, now),
      keyErrors: new KeyErrors(checkedLogger, LOGGED_KEY_ERRORS),
      now,
      closed: false,
    }
  }

  bind(rules: readonly CompiledRule[], options: BindOptions = {}): BoundStore {
    this.keySpaces.claim(rules, options)
    // A variant (a plan's limits, `withLimits`) counts in its limiter's key spaces on purpose, and there may be
    // a hundred of them: the limiter's own rules stand for it in Redis.
    if (options.variant !== true) this.registry.register(rules)
    return new RedisBinding(rules, this.shared, options.eventKeys)
  }

  /**
   * Forgets the short-circuit and the local fallback state; calls made after it throw. The client is yours: quit it yourself. The store's timers,
   * one per node for the calls' deadlines, are unref'd and stop on their own once no call is waiting; the one that
   * registers its rules in Redis again every 30 s (see "Separate stores sharing a key space" in the README) stops here.
   */
  close(): void {
    this.shared.closed = true
    this.registry.stop()
    this.shared.shortCircuit.clear()
    for (const node of this.shared.nodes.all()) node.clearLocal()
  }
}
