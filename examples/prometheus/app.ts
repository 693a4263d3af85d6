// An Express API behind a load shedder, limited by three limiters (an API limit of two stacked rules, a search limit
// and a login limit) and a concurrency limit on its export, with their metrics at GET /metrics for Prometheus to scrape.
// Run it with `npx tsx examples/prometheus/server.ts`.
import type { ShedderOptions, Store } from '@sluice/core'
import { concurrencyLimit, ipKey, rateLimit, shedLoad } from '@sluice/express'
import express from 'express'
import { Registry } from 'prom-client'
import { registerSluiceMetrics } from './metrics'

export interface AppOptions {
  /** The api limiter's store. Default: a MemoryStore. Give a RedisStore to see the short-circuit and the fallback. */
  store?: Store
  /** The shedder's options. Default: 64 in flight, 128 waiting up to 2 s. */
  shed?: ShedderOptions
  /** What an export does. Default: answers at once. */
  exportCsv?: () => Promise<void>
}

export interface MetricsApp {
  app: express.Express
  /** Stops counting (unsubscribes from Sluice's channels). */
  close(): void
}

export function createApp(options: AppOptions = {}): MetricsApp {
  const store = options.store === undefined ? {} : { store: options.store }
  const shedder = shedLoad(options.shed ?? { maxInFlight: 64, queue: 128, maxWait: '2s' })
  const exports = concurrencyLimit({ name: 'export', limit: 1, key: (req) => req.get('x-api-key') ?? ipKey(req) })
  const registry = new Registry()
  const stopMetrics = registerSluiceMetrics(registry, {
    shedder: shedder.shedder,
    concurrency: { export: exports.limiter },
  })
  const app = express()
  // Scrapes are neither shed nor rate limited: mounted first.
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics())
  })
  app.use(shedder)
  app.use(
    rateLimit({
      ...store,
      label: 'api',
      // Per API key (a real app would check it first), else per client IP.
      key: (req) => req.get('x-api-key') ?? ipKey(req),
      rules: [
        { name: 'burst', limit: 5, window: '10s' },
        { name: 'hourly', limit: 100, window: '1h' },
      ],
    }),
  )
  app.get('/items', (_req, res) => {
    res.json({ items: ['a', 'b', 'c'] })
  })
  // One export at a time per client.
  app.get('/export', exports, async (_req, res) => {
    await options.exportCsv?.()
    res.type('text/csv').send('id\n1\n')
  })
  // Two more limiters, each with the one rule `default` and a MemoryStore of its own: their labels keep their series
  // apart. (On one shared store they would need a `prefix` each too, or they would share their counts.)
  app.get('/search', rateLimit({ label: 'search', limit: 20, window: '1m' }), (_req, res) => {
    res.json({ results: [] })
  })
  app.post('/login', rateLimit({ label: 'login', limit: 5, window: '15m' }), (_req, res) => {
    res.json({ ok: true })
  })
  return { app, close: stopMetrics }
}
