// A Koa API behind a load shedder, limited by two limiters (an API limit of two stacked rules, a search limit) and a
// concurrency limit on its export, with their metrics recorded through @opentelemetry/api on the meter it is given.
// Run it with `npx tsx examples/opentelemetry/server.ts`.

import Router from '@koa/router'
import type { Meter } from '@opentelemetry/api'
import type { ShedderOptions, Store } from '@sluice/core'
import { concurrencyLimit, ipKey, rateLimit, shedLoad } from '@sluice/koa'
import Koa from 'koa'
import { instrumentSluice } from './metrics'

export interface AppOptions {
  meter: Meter
  /** The api limiter's store. Default: a MemoryStore. */
  store?: Store
  /** The shedder's options. Default: 64 in flight, 128 waiting up to 2 s. */
  shed?: ShedderOptions
  /** What an export does. Default: answers at once. */
  exportCsv?: () => Promise<void>
}

export interface InstrumentedApp {
  app: Koa
  /** Stops recording (unsubscribes from Sluice's channels). */
  close(): void
}

export function createApp(options: AppOptions): InstrumentedApp {
  const shedder = shedLoad(options.shed ?? { maxInFlight: 64, queue: 128, maxWait: '2s' })
  const exports = concurrencyLimit({ name: 'export', limit: 1, key: (ctx) => ctx.get('x-api-key') || ipKey(ctx) })
  const stopMetrics = instrumentSluice(options.meter, {
    shedder: shedder.shedder,
    concurrency: { export: exports.limiter },
  })
  const app = new Koa()
  app.use(shedder)
  app.use(
    rateLimit({
      ...(options.store === undefined ? {} : { store: options.store }),
      label: 'api',
      // Per API key (a real app would check it first), else per client IP.
      key: (ctx) => ctx.get('x-api-key') || ipKey(ctx),
      rules: [
        { name: 'burst', limit: 5, window: '10s' },
        { name: 'hourly', limit: 100, window: '1h' },
      ],
    }),
  )
  const router = new Router()
  router.get('/', (ctx) => {
    ctx.body = { items: ['a', 'b', 'c'] }
  })
  // One export at a time per client.
  router.get('/export', exports, async (ctx) => {
    await options.exportCsv?.()
    ctx.type = 'text/csv'
    ctx.body = 'id\n1\n'
  })
  // A limiter whose one rule is `default`: its label names it in the metrics.
  router.get('/search', rateLimit({ label: 'search', limit: 20, window: '1m' }), (ctx) => {
    ctx.body = { results: [] }
  })
  app.use(router.routes())
  return { app, close: stopMetrics }
}
