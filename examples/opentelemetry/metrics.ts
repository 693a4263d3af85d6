// Sluice's events as OpenTelemetry metrics, through @opentelemetry/api only: the app's MeterProvider (an SDK, an
// exporter) decides where they go. Any limiter in the process is counted, whatever its framework.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { Meter } from '@opentelemetry/api'
import type { DecisionEvent, StoreEvent } from '@sluice/core'

/**
 * Creates Sluice's instruments on `meter` and subscribes to its channels; the function returned unsubscribes.
 *
 * - `sluice.requests` {`sluice.rule`, `sluice.outcome`}: an admitted request counts `admitted` under every rule; a
 *   rejected one counts `rejected` under each rule that refused it.
 * - `sluice.store.duration` (seconds): how long the store took, for the decisions it made itself.
 * - `sluice.short_circuit.hits`: requests refused locally, without asking Redis.
 * - `sluice.fallback.active` {`sluice.node`}: 1 while a Redis node is down and `onError` decides its requests.
 * - `sluice.store.failures` {`sluice.failure`}: requests the store could not decide.
 */
export function instrumentSluice(meter: Meter): () => void {
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
  const fallbackByNode = new Map<string, number>()
  const fallbackActive = meter.createObservableGauge('sluice.fallback.active', {
    description: "1 while a Redis node is down and the store's onError policy decides its requests",
  })
  const observeFallback = (result: { observe(value: number, attributes: Record<string, string>): void }) => {
    for (const [node, active] of fallbackByNode) result.observe(active, { 'sluice.node': node })
  }
  fallbackActive.addCallback(observeFallback)

  const onDecision = (message: unknown) => {
    const event = message as DecisionEvent
    if (event.operation === 'peek') return
    for (const rule of event.rules) {
      if (event.allowed) requests.add(1, { 'sluice.rule': rule.rule, 'sluice.outcome': 'admitted' })
      else if (!rule.allowed) requests.add(1, { 'sluice.rule': rule.rule, 'sluice.outcome': 'rejected' })
    }
    if (event.source === 'store') duration.record(event.storeLatencyMs / 1000)
    else if (event.source === 'short-circuit') shortCircuit.add(1)
  }
  const onStore = (message: unknown) => {
    const event = message as StoreEvent
    if (event.type === 'fallback') fallbackByNode.set(event.node, 1)
    else if (event.type === 'recovered') fallbackByNode.set(event.node, 0)
    else if (event.type === 'key-error' || event.type === 'unavailable')
      failures.add(1, { 'sluice.failure': event.type })
  }
  subscribe('sluice:decision', onDecision)
  subscribe('sluice:store', onStore)
  return () => {
    unsubscribe('sluice:decision', onDecision)
    unsubscribe('sluice:store', onStore)
    fallbackActive.removeCallback(observeFallback)
  }
}
