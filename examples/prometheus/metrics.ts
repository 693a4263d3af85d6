// Sluice's events as Prometheus metrics: the limiters publish on node:diagnostics_channel, and these subscribers
// count. Nothing here knows the app: any limiter in the process (Express, Koa, Fastify, createLimiter) is counted,
// under its `label` (or prefix). The shedder and concurrency limiters given are read at each scrape.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { ConcurrencyLimiter, DecisionEvent, Shedder, ShedEvent, StoreEvent } from '@sluice/core'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

/** What the metrics read at each scrape besides the events: the app's shedder and concurrency limiters. */
export interface Watched {
  /** `shedLoad`'s shedder (`middleware.shedder`, Fastify's `app.shedder`). */
  shedder?: Shedder
  /** Each `concurrencyLimit`'s limiter (`middleware.limiter`), by the label its gauge series carry. */
  concurrency?: Readonly<Record<string, ConcurrencyLimiter>>
}

/**
 * Registers Sluice's metrics on `registry` and subscribes to its channels; the function returned unsubscribes.
 *
 * - `sluice_requests_total{limiter, rule, outcome}`: an admitted request counts `admitted` under every rule of its
 *   limiter (it was charged to all of them); a rejected one counts `rejected` under each rule that refused it.
 * - `sluice_store_latency_seconds{limiter}`: how long the store took to decide, for the decisions it made itself.
 * - `sluice_short_circuit_total{limiter}`: requests refused locally, without asking Redis.
 * - `sluice_fallback_active{node}`: 1 while a Redis node is down and `onError` decides its requests.
 * - `sluice_store_failures_total{limiter, type}`: requests the store could not decide (`key-error`, `unavailable`).
 * - `sluice_shed_total{reason, priority}`: requests `shedLoad` answered 503.
 * - `sluice_shed_in_flight`, `sluice_shed_waiting`, `sluice_shed_limit`: the shedder's running requests, its waiting
 *   line and its ceiling, at the scrape.
 * - `sluice_concurrency_in_flight{limiter}`: the slots each concurrency limiter holds in this process, at the scrape.
 */
export function registerSluiceMetrics(registry: Registry, watched: Watched = {}): () => void {
  const registers = [registry]
  const requests = new Counter({
    name: 'sluice_requests_total',
    help: 'Requests decided by a Sluice limiter, per limiter, rule and outcome',
    labelNames: ['limiter', 'rule', 'outcome'] as const,
    registers,
  })
  const latency = new Histogram({
    name: 'sluice_store_latency_seconds',
    help: 'How long the store took to decide',
    labelNames: ['limiter'] as const,
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers,
  })
  const shortCircuit = new Counter({
    name: 'sluice_short_circuit_total',
    help: 'Requests refused locally, without a round trip to Redis',
    labelNames: ['limiter'] as const,
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
    labelNames: ['limiter', 'type'] as const,
    registers,
  })
  const shed = new Counter({
    name: 'sluice_shed_total',
    help: 'Requests shed (answered 503) by the load shedder, per reason and priority',
    labelNames: ['reason', 'priority'] as const,
    registers,
  })
  const { shedder, concurrency = {} } = watched
  if (shedder !== undefined) {
    const shedderGauge = (name: string, help: string, read: (s: Shedder) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(shedder))
        },
      })
    shedderGauge('sluice_shed_in_flight', 'Requests the load shedder lets run now', (s) => s.inFlight)
    shedderGauge('sluice_shed_waiting', "Requests in the load shedder's waiting line now", (s) => s.waiting)
    shedderGauge('sluice_shed_limit', "The load shedder's in-flight ceiling now", (s) => s.limit)
  }
  new Gauge({
    name: 'sluice_concurrency_in_flight',
    help: 'Slots each concurrency limiter holds in this process now',
    labelNames: ['limiter'] as const,
    registers,
    collect() {
      for (const [limiter, concurrencyLimiter] of Object.entries(concurrency)) {
        this.set({ limiter }, concurrencyLimiter.held)
      }
    },
  })

  const onDecision = (message: unknown) => {
    const event = message as DecisionEvent
    if (event.operation === 'peek') return
    const { limiter } = event
    for (const rule of event.rules) {
      if (event.allowed) requests.inc({ limiter, rule: rule.rule, outcome: 'admitted' })
      else if (!rule.allowed) requests.inc({ limiter, rule: rule.rule, outcome: 'rejected' })
    }
    if (event.source === 'store') latency.observe({ limiter }, event.storeLatencyMs / 1000)
    else if (event.source === 'short-circuit') shortCircuit.inc({ limiter })
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
        failures.inc({ limiter: event.limiter, type: event.type })
        break
    }
  }
  const onShed = (message: unknown) => {
    const event = message as ShedEvent
    shed.inc({ reason: event.reason, priority: event.priority })
  }
  subscribe('sluice:decision', onDecision)
  subscribe('sluice:store', onStore)
  subscribe('sluice:shed', onShed)
  return () => {
    unsubscribe('sluice:decision', onDecision)
    unsubscribe('sluice:store', onStore)
    unsubscribe('sluice:shed', onShed)
  }
}
