// examples/opentelemetry, run as its README says: requests over real HTTP, then what an in-memory exporter received
// from the SDK's reader.
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics'
import { MemoryStore } from '@sluice/core'
import { createApp } from '../../examples/opentelemetry/app'
import { serve, statuses } from './scrape'

/** A meter provider whose metrics a test reads when it wants: `read()` flushes and returns what was exported. */
function inMemoryMetrics() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  // Exports when flushed: the interval is longer than the test.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const provider = new MeterProvider({ readers: [reader] })
  const read = async () => {
    await reader.forceFlush()
    const exported =
      exporter
        .getMetrics()
        .at(-1)
        ?.scopeMetrics.flatMap((scope) => scope.metrics) ?? []
    return (name: string) => exported.find((m) => m.descriptor.name === name) as MetricData
  }
  return { provider, read }
}

/** The points of a metric as [attribute values..., value], for `keys` attributes. */
function points(metric: MetricData | undefined, keys: readonly string[]): unknown[][] {
  return ((metric?.dataPoints ?? []) as DataPoint<number>[]).map((point) => [
    ...keys.map((key) => point.attributes[key]),
    point.value,
  ])
}

/** A promise and its resolve, for a handler the test holds until it lets it go. */
function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

// Time stands still (2026-01-01T00:00:10Z), so no window boundary falls between two requests.
const NOW = 1_767_225_610_000

test('5 admitted and 2 rejected by rule "burst" of limiter "api", each decision timed, read through the SDK', async () => {
  const { provider, read } = inMemoryMetrics()
  const store = new MemoryStore({ clock: () => NOW })
  const { app, close } = createApp({ meter: provider.getMeter('test'), store })
  const server = await serve(app.callback())
  try {
    expect(await statuses(server.url, 7)).toEqual([200, 200, 200, 200, 200, 429, 429])
    const metric = await read()
    const requests = points(metric('sluice.requests'), ['sluice.limiter', 'sluice.rule', 'sluice.outcome'])
    expect(requests).toEqual(
      expect.arrayContaining([
        ['api', 'burst', 'admitted', 5],
        ['api', 'burst', 'rejected', 2],
        ['api', 'hourly', 'admitted', 5],
      ]),
    )
    expect(requests).toHaveLength(3)
    const duration = metric('sluice.store.duration')
    expect(duration.descriptor.unit).toBe('s')
    expect((duration.dataPoints[0] as DataPoint<Histogram>).value.count).toBe(7)
    // Nothing was refused without asking the store, and no fallback ever started, on the memory store.
    expect(metric('sluice.short_circuit.hits')).toBeUndefined()
    expect(metric('sluice.fallback.active')).toBeUndefined()
  } finally {
    close()
    await server.close()
    await provider.shutdown()
  }
})

/** The example app on a fresh in-memory meter, with an export the test holds until it lets it go. */
async function started(shed?: { maxInFlight: number; queue: number }) {
  const { provider, read } = inMemoryMetrics()
  const running = gate()
  const release = gate()
  const { app, close } = createApp({
    meter: provider.getMeter('test'),
    store: new MemoryStore({ clock: () => NOW }),
    ...(shed === undefined ? {} : { shed }),
    exportCsv: () => {
      running.open()
      return release.opened
    },
  })
  const server = await serve(app.callback())
  return {
    url: server.url,
    read,
    running: running.opened,
    release: release.open,
    async stop() {
      close()
      await server.close()
      await provider.shutdown()
    },
  }
}

test("a second limiter's one rule 'default' is a series of its own, told apart by sluice.limiter", async () => {
  const app = await started()
  try {
    // Far below the search limit (20 a minute), so both are admitted whatever the clock says.
    expect(await statuses(`${app.url}/search`, 2, 'dana')).toEqual([200, 200])
    const metric = await app.read()
    expect(points(metric('sluice.requests'), ['sluice.limiter', 'sluice.rule', 'sluice.outcome'])).toEqual(
      expect.arrayContaining([
        ['search', 'default', 'admitted', 2],
        ['api', 'burst', 'admitted', 2],
      ]),
    )
  } finally {
    await app.stop()
  }
})

test('a concurrency limit: the slot a running export holds is in sluice.concurrency.in_flight; a second is refused', async () => {
  const app = await started()
  try {
    const first = fetch(`${app.url}/export`, { headers: { 'x-api-key': 'alice' } })
    await app.running
    expect(await statuses(`${app.url}/export`, 1, 'alice')).toEqual([429])
    const metric = await app.read()
    expect(points(metric('sluice.concurrency.in_flight'), ['sluice.limiter'])).toEqual([['export', 1]])
    app.release()
    expect((await first).status).toBe(200)
  } finally {
    await app.stop()
  }
})

test('load shedding: requests shed while the one slot is taken are in sluice.shed, the slot in the gauges', async () => {
  const app = await started({ maxInFlight: 1, queue: 0 })
  try {
    const first = fetch(`${app.url}/export`, { headers: { 'x-api-key': 'alice' } })
    await app.running
    expect(await statuses(app.url, 2, 'bob')).toEqual([503, 503])
    const metric = await app.read()
    expect(points(metric('sluice.shed'), ['sluice.shed.reason', 'sluice.priority'])).toEqual([
      ['overloaded', 'normal', 2],
    ])
    expect(points(metric('sluice.shed.in_flight'), [])).toEqual([[1]])
    expect(points(metric('sluice.shed.waiting'), [])).toEqual([[0]])
    expect(points(metric('sluice.shed.limit'), [])).toEqual([[1]])
    app.release()
    expect((await first).status).toBe(200)
  } finally {
    await app.stop()
  }
})
