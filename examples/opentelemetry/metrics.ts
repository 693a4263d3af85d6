// Sluice's events as OpenTelemetry metrics, through @opentelemetry/api only: the app's MeterProvider (an SDK, an
// exporter) decides where they go. Any limiter in the process is counted, under its `label` (or prefix), whatever its
// framework; the shedder and concurrency limiters given are read at each collection.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api'
import type { ConcurrencyLimiter, DecisionEvent, Shedder, ShedEvent, StoreEvent } from '@sluice/core'

/** What the instruments read at each collection besides the events: the app's shedder and concurrency limiters. */
export interface Watched {
  /** `shedLoad`'s shedder (`middleware.shedder`, Fastify's `app.shedder`). */
  shedder?: Shedder
  /** Each `concurrencyLimit`'s limiter (`middleware.limiter`), by the `sluice.limiter` its points carry. */
  concurrency?: Readonly<Record<string, ConcurrencyLimiter>>
}

/**
 * Creates Sluice's instruments on `meter` and subscribes to its channels; the function returned unsubscribes.
 *
 * - `sluice.requests` {`sluice.limiter`, `sluice.rule`, `sluice.outcome`}: an admitted request counts `admitted`
 *   under every rule of its limiter; a rejected one counts `rejected` under each rule that refused it.
 * - `sluice.store.duration` (seconds) {`sluice.limiter`}: how long the store took, for the decisions it made itself.
 * - `sluice.short_circuit.hits` {`sluice.limiter`}: requests refused locally, without asking Redis.
 * - `sluice.fallback.active` {`sluice.node`}: 1 while a Redis node is down and `onError` decides its requests.
 * - `sluice.store.failures` {`sluice.limiter`, `sluice.failure`}: requests the store could not decide.
 * - `sluice.shed` {`sluice.shed.reason`, `sluice.priority`}: requests the load shedder answered 503.
 * - `sluice.shed.in_flight`, `sluice.shed.waiting`, `sluice.shed.limit`: the shedder's running requests, its waiting
 *   line and its ceiling.
 * - `sluice.concurrency.in_flight` {`sluice.limiter`}: the slots each concurrency limiter holds in this process.
 */
export function instrumentSluice(meter: Meter, watched: Watched = {}): () => void {
  const requests = meter.createCounter('sluice.requests', { description: 'Requests decided by a Sluice limiter' })
  const duration = meter.createHistogram('sluice.store.duration', {
    description: 'How long the store took to decide',
    unit: 's',
    advice: { explicitBucketBoundaries: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25] },
  })
  const shortCircuit = meter.createCounter('sluice.short_circuit.hits', {
    description: 'Requests refused locally, without a round trip to Redis',
  })
  const failures = meter.createCounter('sluice.store.failures', { description: 'Requests the store could not decide' })
  const shed = meter.createCounter('sluice.shed', { description: 'Requests shed (answered 503) by the load shedder' })
  const fallbackByNode = new Map<string, number>()
  const gauges: [ReturnType<Meter['createObservableGauge']>, (result: ObservableResult<Attributes>) => void][] = []
  const gauge = (name: string, description: string, observe: (result: ObservableResult<Attributes>) => void) => {
    const instrument = meter.createObservableGauge(name, { description })
    instrument.addCallback(observe)
    gauges.push([instrument, observe])
  }
  gauge(
    'sluice.fallback.active',
    "1 while a Redis node is down and the store's onError policy decides its requests",
    (r) => {
      for (const [node, active] of fallbackByNode) r.observe(active, { 'sluice.node': node })
    },
  )
  const { shedder, concurrency = {} } = watched
  if (shedder !== undefined) {
    gauge('sluice.shed.in_flight', 'Requests the load shedder lets run now', (r) => r.observe(shedder.inFlight))
    gauge('sluice.shed.waiting', "Requests in the load shedder's waiting line now", (r) => r.observe(shedder.waiting))
    gauge('sluice.shed.limit', "The load shedder's in-flight ceiling now", (r) => r.observe(shedder.limit))
  }
  gauge('sluice.concurrency.in_flight', 'Slots each concurrency limiter holds in this process now', (r) => {
    for (const [limiter, held] of Object.entries(concurrency)) r.observe(held.held, { 'sluice.limiter': limiter })
  })

  const onDecision = (message: unknown) => {
    const event = message as DecisionEvent
    if (event.operation === 'peek') return
    const limiter = event.limiter
    for (const rule of event.rules) {
      if (event.allowed) {
        requests.add(1, { 'sluice.limiter': limiter, 'sluice.rule': rule.rule, 'sluice.outcome': 'admitted' })
      } else if (!rule.allowed) {
        requests.add(1, { 'sluice.limiter': limiter, 'sluice.rule': rule.rule, 'sluice.outcome': 'rejected' })
      }
    }
    if (event.source === 'store') duration.record(event.storeLatencyMs / 1000, { 'sluice.limiter': limiter })
    else if (event.source === 'short-circuit') shortCircuit.add(1, { 'sluice.limiter': limiter })
  }
  const onStore = (message: unknown) => {
    const event = message as StoreEvent
    if (event.type === 'fallback') fallbackByNode.set(event.node, 1)
    else if (event.type === 'recovered') fallbackByNode.set(event.node, 0)
    else if (event.type === 'key-error' || event.type === 'unavailable')
      failures.add(1, { 'sluice.limiter': event.limiter, 'sluice.failure': event.type })
  }
  const onShed = (message: unknown) => {
    const event = message as ShedEvent
    shed.add(1, { 'sluice.shed.reason': event.reason, 'sluice.priority': event.priority })
  }
  subscribe('sluice:decision', onDecision)
  subscribe('sluice:store', onStore)
  subscribe('sluice:shed', onShed)
  return () => {
    unsubscribe('sluice:decision', onDecision)
    unsubscribe('sluice:store', onStore)
    unsubscribe('sluice:shed', onShed)
    for (const [instrument, observe] of gauges) instrument.removeCallback(observe)
  }
}
