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

test('5 admitted and 2 rejected by rule "burst", each decision timed, read through the SDK', async () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  // Exports when flushed: the interval is longer than the test.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const provider = new MeterProvider({ readers: [reader] })
  // Time stands still (2026-01-01T00:00:10Z), so no window boundary falls between two requests.
  const store = new MemoryStore({ clock: () => 1_767_225_610_000 })
  const { app, close } = createApp({ meter: provider.getMeter('test'), store })
  const server = await serve(app.callback())
  try {
    expect(await statuses(server.url, 7)).toEqual([200, 200, 200, 200, 200, 429, 429])
    await reader.forceFlush()
    const exported =
      exporter
        .getMetrics()
        .at(-1)
        ?.scopeMetrics.flatMap((scope) => scope.metrics) ?? []
    const metric = (name: string) => exported.find((m) => m.descriptor.name === name) as MetricData
    const requests = (metric('sluice.requests').dataPoints as DataPoint<number>[]).map((point) => [
      point.attributes['sluice.rule'],
      point.attributes['sluice.outcome'],
      point.value,
    ])
    expect(requests).toEqual(
      expect.arrayContaining([
        ['burst', 'admitted', 5],
        ['burst', 'rejected', 2],
        ['hourly', 'admitted', 5],
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
