// The messages Sluice publishes on its diagnostics channels (see events.ts), as types: what a subscriber reads.
import type { Decision } from '../rules/decision'
import type { DecisionSource, FailurePolicy } from '../store/store'
import type { StoreKeyError, StoreUnavailableError } from '../util/errors'

/**
 * One rule's part of a {@link DecisionEvent}.
 *
 * @example
 * for (const r of event.rules) counter.inc({ rule: r.rule, outcome: r.allowed ? 'admitted' : 'rejected' })
 */
export interface RuleDecisionEvent {
  /** The rule's name. */
  readonly rule: string
  /**
   * The first 16 hex digits of the SHA-256 of the key: the same key gives the same hash in every process. Worked out
   * when first read.
   */
  readonly keyHash: string
  /** The key itself, only when the limiter has `eventKeys: 'raw'`. */
  readonly key?: string
  /** Whether this rule admits the request (a rule of a rejected stacked request may admit while another refuses). */
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly retryAfterMs: number
}

/**
 * A decision of a limiter, published on the `sluice:decision` diagnostics channel. Nothing is built when nobody
 * subscribes.
 *
 * @example
 * import { subscribe } from 'node:diagnostics_channel'
 * subscribe('sluice:decision', (message) => {
 *   const event = message as DecisionEvent
 *   if (!event.allowed) console.log(`rejected by ${event.rule} after ${event.storeLatencyMs.toFixed(2)} ms`)
 * })
 */
export interface DecisionEvent {
  /** `'consume'` charges the request, `'peek'` only looks, `'enqueue'` takes a place in a leaky-bucket queue. */
  readonly operation: 'consume' | 'peek' | 'enqueue'
  /**
   * Which limiter decided: its `label` option, or else its `prefix` (distinct for each Fastify route limit). Two
   * limiters whose rules share a name (two `rateLimit({ limit })` are both rule `default`) tell apart by it.
   */
  readonly limiter: string
  /** The limiter's `prefix`, before each of its store keys. */
  readonly prefix: string
  readonly allowed: boolean
  /** The rule that bound (see the Decision). */
  readonly rule: string
  readonly cost: number
  /** Every rule, in the limiter's order. */
  readonly rules: readonly RuleDecisionEvent[]
  readonly source: DecisionSource
  /** Milliseconds from the limiter's call to the store to its answer, as this process saw it. */
  readonly storeLatencyMs: number
  /** The Decision the caller gets. */
  readonly decision: Decision
}

/**
 * A store failure or recovery, published on the `sluice:store` diagnostics channel (nothing is built when nobody
 * subscribes). A RedisStore publishes `'outage'` then `'fallback'` when a node stops answering and `'recovered'`
 * when it answers again; a limiter publishes `'key-error'` and `'unavailable'` for each request its store could not
 * decide.
 *
 * @example
 * subscribe('sluice:store', (message) => {
 *   const event = message as StoreEvent
 *   if (event.type === 'fallback') fallbackActive.set(1)
 *   if (event.type === 'recovered') fallbackActive.set(0)
 * })
 */
export type StoreEvent = StoreOutageEvent | StoreFallbackEvent | StoreRecoveredEvent | StoreRequestFailedEvent

/**
 * A RedisStore node stopped answering: an outage starts (logged once).
 *
 * @example
 * if (event.type === 'outage') console.error(`${event.node}: ${String(event.error)}`)
 */
export interface StoreOutageEvent {
  readonly type: 'outage'
  /** `'Redis'`, or `'Redis Cluster node host:port'`. */
  readonly node: string
  /** The evidence: a connection error, or the deadline a call missed. */
  readonly error: unknown
}

/**
 * From now until `'recovered'`, the requests of that node are decided by the store's `onError` policy.
 *
 * @example
 * if (event.type === 'fallback') gauge.set({ node: event.node, policy: event.onError }, 1)
 */
export interface StoreFallbackEvent {
  readonly type: 'fallback'
  readonly node: string
  readonly onError: FailurePolicy
}

/**
 * The node answers again; decisions come from it again.
 *
 * @example
 * if (event.type === 'recovered') outageSeconds.observe(event.outageMs / 1000)
 */
export interface StoreRecoveredEvent {
  readonly type: 'recovered'
  readonly node: string
  /** How long the outage lasted. */
  readonly outageMs: number
}

/**
 * A request the store could not decide: `'key-error'`, what the store holds for one key is unusable (a
 * `StoreKeyError`, which names the rule); `'unavailable'`, the store is down and fails closed (a
 * `StoreUnavailableError`).
 *
 * @example
 * if (event.type === 'key-error') console.error(`rule ${event.rule}, key ${event.keyHash}`)
 */
export interface StoreRequestFailedEvent {
  readonly type: 'key-error' | 'unavailable'
  /** The limiter's `label`, or else its `prefix`, as in a {@link DecisionEvent}. */
  readonly limiter: string
  readonly prefix: string
  /** `'key-error'`: the rule whose state is unusable; `'unavailable'`: the limiter's first rule. */
  readonly rule: string
  readonly keyHash: string
  /** The key itself, only when the limiter has `eventKeys: 'raw'`. */
  readonly key?: string
  readonly error: StoreKeyError | StoreUnavailableError
  readonly storeLatencyMs: number
}
