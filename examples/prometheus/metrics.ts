// Sluice's events as Prometheus metrics: the limiter publishes on node:diagnostics_channel, and these subscribers
// count. Nothing here knows the app: any limiter in the process (Express, Koa, Fastify, createLimiter) is counted.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { DecisionEvent, StoreEvent } from '@sluice/core'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

/**
 * Registers Sluice's metrics on `registry` and subscribes to its channels; the function returned unsubscribes.
 *
 * - `sluice_requests_total{rule, outcome}`: an admitted request counts `admitted` under every rule (it was charged to
 *   all of them); a rejected one counts `rejected` under each rule that refused it.
 * - `sluice_store_latency_seconds`: how long the store took to decide, for the decisions it made itself.
 * - `sluice_short_circuit_total`: requests refused locally, without asking Redis.
 * - `sluice_fallback_active{node}`: 1 while a Redis node is down and `onError` decides its requests.
 * - `sluice_store_failures_total{type}`: requests the store could not decide (`key-error`, `unavailable`).
 */
export function registerSluiceMetrics(registry: Registry): () => void {
  const registers = [registry]
  const requests = new Counter({
    name: 'sluice_requests_total',
    help: 'Requests decided by a Sluice limiter, per rule and outcome',
    labelNames: ['rule', 'outcome'] as const,
    registers,
  })
  const latency = new Histogram({
    name: 'sluice_store_latency_seconds',
    help: 'How long the store took to decide',
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers,
  })
  const shortCircuit = new Counter({
    name: 'sluice_short_circuit_total',
    help: 'Requests refused locally, without a round trip to Redis',
    registers,
  })
  const fallbackActive = new Gauge({
    name: 'sluice_fallback_active',
    help: "1 while a Redis node is down and the store's onError policy decides its requests",
    labelNames: ['node'] as const,
    registers,
  })
  const failures = new Counter({
    name: 'sluice_store_failures_total',
    help: 'Requests the store could not decide',
    labelNames: ['type'] as const,
    registers,
  })

  const onDecision = (message: unknown) => {
    const event = message as DecisionEvent
    if (event.operation === 'peek') return
    for (const rule of event.rules) {
      if (event.allowed) requests.inc({ rule: rule.rule, outcome: 'admitted' })
      else if (!rule.allowed) requests.inc({ rule: rule.rule, outcome: 'rejected' })
    }
    if (event.source === 'store') latency.observe(event.storeLatencyMs / 1000)
    else if (event.source === 'short-circuit') shortCircuit.inc()
  }
  const onStore = (message: unknown) => {
    const event = message as StoreEvent
    switch (event.type) {
      case 'fallback':
        fallbackActive.set({ node: event.node }, 1)
        break
      case 'recovered':
        fallbackActive.set({ node: event.node }, 0)
        break
      case 'key-error':
      case 'unavailable':
        failures.inc({ type: event.type })
        break
    }
  }
  subscribe('sluice:decision', onDecision)
  subscribe('sluice:store', onStore)
  return () => {
    unsubscribe('sluice:decision', onDecision)
    unsubscribe('sluice:store', onStore)
  }
}
