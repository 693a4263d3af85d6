// A Koa API limited by two stacked rules, its limiter's metrics recorded through @opentelemetry/api on the meter
// it is given. Run it with `npx tsx examples/opentelemetry/server.ts`.
import type { Meter } from '@opentelemetry/api'
import type { Store } from '@sluice/core'
import { ipKey, rateLimit } from '@sluice/koa'
import Koa from 'koa'
import { instrumentSluice } from './metrics'

export interface AppOptions {
  meter: Meter
  /** Default: the limiter's own MemoryStore. */
  store?: Store
}

export interface InstrumentedApp {
  app: Koa
  /** Stops recording (unsubscribes from Sluice's channels). */
  close(): void
}

export function createApp(options: AppOptions): InstrumentedApp {
  const stopMetrics = instrumentSluice(options.meter)
  const app = new Koa()
  app.use(
    rateLimit({
      ...(options.store === undefined ? {} : { store: options.store }),
      // Per API key (a real app would check it first), else per client IP.
      key: (ctx) => ctx.get('x-api-key') || ipKey(ctx),
      rules: [
        { name: 'burst', limit: 5, window: '10s' },
        { name: 'hourly', limit: 100, window: '1h' },
      ],
    }),
  )
  app.use((ctx) => {
    ctx.body = { items: ['a', 'b', 'c'] }
  })
  return { app, close: stopMetrics }
}
