// Prints the metrics to the console every 10 s; a real service would give the reader an OTLP exporter instead.
import { metrics } from '@opentelemetry/api'
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { createApp } from './app'

const reader = new PeriodicExportingMetricReader({
  exporter: new ConsoleMetricExporter(),
  exportIntervalMillis: 10_000,
})
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))

const { PORT = '3000' } = process.env
const port = Number(PORT)
createApp({ meter: metrics.getMeter('sluice-example') }).app.listen(port, () =>
  console.log(`opentelemetry example: http://localhost:${port}/`),
)
