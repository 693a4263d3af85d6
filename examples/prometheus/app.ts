// An Express API limited by two stacked rules, with its limiter's metrics at GET /metrics for Prometheus to scrape.
// Run it with `npx tsx examples/prometheus/server.ts`.
import type { Store } from '@sluice/core'
import { ipKey, rateLimit } from '@sluice/express'
import express from 'express'
import { Registry } from 'prom-client'
import { registerSluiceMetrics } from './metrics'

export interface AppOptions {
  /** Default: the limiter's own MemoryStore. Give a RedisStore to see the short-circuit and the fallback at work. */
  store?: Store
}

export interface MetricsApp {
  app: express.Express
  /** Stops counting (unsubscribes from Sluice's channels). */
  close(): void
}

export function createApp(options: AppOptions = {}): MetricsApp {
  const registry = new Registry()
  const stopMetrics = registerSluiceMetrics(registry)
  const app = express()
  // Scrapes are not rate limited: mounted before the limiter.
  app.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics())
  })
  app.use(
    rateLimit({
      ...(options.store === undefined ? {} : { store: options.store }),
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
  return { app, close: stopMetrics }
}
