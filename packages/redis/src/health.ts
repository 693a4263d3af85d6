import { channel } from 'node:diagnostics_channel'
import {
  type BoundStore,
  type CompiledRule,
  type FailurePolicy,
  type Logger,
  type MemoryStore,
  type StoreEvent,
  StoreUnavailableError,
  warnEach,
} from '@sluice/core/store'
import { Deadlines } from './deadlines'
import { reachOf } from './errors'

/**
 * What a call gets when Redis did not decide it: its node is in an outage (the call was not even sent) or failed it, or
 * its slot could not be decided now. The request falls back (`onError`); `cause` says why.
 */
export class Unanswered {
  constructor(
    readonly node: NodeHealth,
    readonly cause: unknown,
  ) {}
}

// The channel the limiters publish store failures on (see StoreEvent in @sluice/core).
const storeChannel = channel('sluice:store')

// The local stand-in binds the same rules as the Redis binding, which has already reported any shared key space.
const ALREADY_REPORTED: Logger = { warn() {}, error() {} }

/** What {@link NodeHealth} needs: its name in the log, its deadlines, how to probe, and how to report. */
export interface NodeOptions {
  /** 'Redis' for a single server, or 'Redis Cluster node 10.0.0.5:7000'. */
  readonly label: string
  /** Whether the node is one of a Cluster's: the log then speaks of its keys. */
  readonly inCluster: boolean
  readonly timeoutMs: number
  readonly backstopMs: number
  readonly probeIntervalMs: number
  readonly logger: Logger
  /** What decides the requests during an outage. */
  readonly onError: FailurePolicy
  /** What requests get during an outage, for the log line: 'deciding from local memory', ... */
  readonly duringOutage: string
  /** Asks Redis whether it answers for the slot of `key` again (on a Cluster, wherever that slot now lives). */
  readonly probe: (key: string) => Promise<unknown>
  /** After the node stopped answering: on a Cluster, learn the slot map again (a replica may have taken over). */
  readonly refresh: () => void
  /** Where the client now sends `key`: on a Cluster, the address of its slot's master (a failover changes it). */
  readonly route: (key: string) => string | undefined
  /** The local stand-in of `onError: 'local'`, made when first needed; undefined under other policies. */
  readonly newLocal: (() => MemoryStore) | undefined
  /** Told when an outage starts and when it ends. */
  readonly onAway: (node: NodeHealth) => void
  readonly onBack: (node: NodeHealth) => void
}

/**
 * The health of one Redis node: a single server, or one master of a Cluster (its keys' health, wherever a failover
 * moves them). Every call runs within its deadlines (see `Deadlines`). A call that fails for a reason that concerns
 * the node (see `Reach`) starts an outage, logged once: the calls still waiting on the node fall back at once, no call
 * is sent to it, and one probe at a time, at most every `probeIntervalMs` and only while requests arrive, writes a
 * short-lived key in the slot that failed. The first probe answered ends the outage, logged once; only then are the
 * local counts kept meanwhile dropped. A key error is the caller's; a slot error falls back for that call alone.
 *
 * @example
 * const outcome = await node.call(redisKey, (resent) => runner.run(ruleSet, keys, 1, 'charge', resent))
 * if (outcome instanceof Unanswered) fallBack(outcome)
 */
export class NodeHealth {
  readonly deadlines: Deadlines
  private outage: Unanswered | undefined
  private outageSince = 0
  private probeKey = ''
  private nextProbeAt = 0
  /** The probe last sent, and the outage it was sent in: a probe's answer concerns the outage it was sent in only. */
  private probeSeq = 0
  private outageSeq = 0
  /** Whether the probe last sent is still waiting, and where the client sent it. */
  private probing = false
  private probeRoute: string | undefined
  private local: MemoryStore | undefined
  private readonly localBindings = new WeakMap<readonly CompiledRule[], BoundStore>()

  constructor(private readonly options: NodeOptions) {
    this.deadlines = new Deadlines(options)
  }

  /** Runs `work` on this node within its deadlines, unless the node is away; Unanswered when the work was not done. */
  async call<T>(key: string, work: (resent: () => boolean) => Promise<T>): Promise<T | Unanswered> {
    if (this.outage !== undefined) {
      this.tick()
      return this.outage
    }
    try {
      return await this.deadlines.run(work)
    } catch (error) {
      const reach = reachOf(error)
      if (reach === 'key') throw error
      if (reach === 'slot') return new Unanswered(this, error)
      return this.failed(error, key)
    }
  }

  /**
   * Sends a probe when one is due: during an outage, while requests arrive for this node or for any other. A probe can
   * wait on a node that hangs (stopped, not refusing) for as long as its deadline allows, up to the backstop on a
   * starved instance; meanwhile a replica may take its slots over. So while a probe waits, the slot map is asked for
   * again every `probeIntervalMs`, and once the client sends the slot elsewhere a new probe goes there: the first
   * answered ends the outage.
   */
  tick(): void {
    if (this.outage === undefined) return
    const now = performance.now()
    if (now < this.nextProbeAt) return
    const { probeIntervalMs, route, refresh } = this.options
    if (this.probing && route(this.probeKey) === this.probeRoute) {
      this.nextProbeAt = now + probeIntervalMs
      refresh()
      return
    }
    this.sendProbe()
  }

  private sendProbe(): void {
    const { probe, probeIntervalMs, route, refresh } = this.options
    const seq = ++this.probeSeq
    const outageSeq = this.outageSeq
    this.probing = true
    this.probeRoute = route(this.probeKey)
    this.nextProbeAt = performance.now() + probeIntervalMs
    this.deadlines
      .run(() => probe(this.probeKey))
      .then(
        () => {
          if (seq === this.probeSeq) this.probing = false
          if (outageSeq === this.outageSeq) this.recovered()
        },
        (error: unknown) => {
          // A probe overtaken by a newer one says nothing the newer one will not.
          if (seq !== this.probeSeq) return
          this.probing = false
          if (this.outage !== undefined) this.outage = new Unanswered(this, error)
          this.nextProbeAt = performance.now() + probeIntervalMs
          refresh()
        },
      )
  }

  /** The error a store that fails closed throws for a request this node did not decide. */
  unavailable(unanswered: Unanswered): StoreUnavailableError {
    return new StoreUnavailableError(`sluice: ${this.options.label} is unavailable (${message(unanswered.cause)})`, {
      cause: unanswered.cause,
    })
  }

  /**
   * The local stand-in bound to `rules` ('local' policy), kept until this node answers for its keys again; made when
   * first needed, unless `make` is false.
   */
  localFor(rules: readonly CompiledRule[], make = true): BoundStore | undefined {
    let bound = this.localBindings.get(rules)
    if (bound === undefined) {
      if (this.options.newLocal === undefined || !make) return undefined
      this.local ??= this.options.newLocal()
      bound = this.local.bind(rules, { logger: ALREADY_REPORTED })
      this.localBindings.set(rules, bound)
    }
    return bound
  }

  /** Forgets the local counts (the store was closed). */
  clearLocal(): void {
    this.local?.clear()
  }

  private failed(error: unknown, key: string): Unanswered {
    if (this.outage !== undefined) return this.outage
    const { label, inCluster, probeIntervalMs, logger, duringOutage } = this.options
    const unanswered = new Unanswered(this, error)
    this.outage = unanswered
    this.outageSeq++
    this.outageSince = performance.now()
    this.probeKey = key
    this.nextProbeAt = this.outageSince + probeIntervalMs
    this.options.onAway(this)
    if (storeChannel.hasSubscribers) {
      publish({ type: 'outage', node: label, error })
      publish({ type: 'fallback', node: label, onError: this.options.onError })
    }
    warnEach(
      logger,
      'SLUICE_REDIS_UNAVAILABLE',
      `sluice: ${label} is unavailable (${message(error)}); ${duringOutage}${inCluster ? ' for its keys' : ''} ` +
        'until it answers again',
    )
    // The calls still waiting on this node wait on a connection that failed: they fall back now, not one by one.
    this.deadlines.failAll(error instanceof Error ? error : new Error(message(error)))
    this.options.refresh()
    return unanswered
  }

  private recovered(): void {
    if (this.outage === undefined) return
    const lasted = Math.round(performance.now() - this.outageSince)
    this.outage = undefined
    // The local counts were a stand-in for these keys; Redis answers for them again, and is the truth.
    this.local?.clear()
    this.options.onBack(this)
    const { label, inCluster, logger } = this.options
    if (storeChannel.hasSubscribers) publish({ type: 'recovered', node: label, outageMs: lasted })
    logger.info?.(
      inCluster
        ? `sluice: the keys of ${label} are answered again after ${lasted} ms; decisions come from Redis again`
        : `sluice: ${label} answers again after ${lasted} ms; decisions come from Redis again`,
    )
  }
}

function publish(event: StoreEvent): void {
  storeChannel.publish(event)
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
