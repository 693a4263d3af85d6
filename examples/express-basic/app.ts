// A small Express API limited by @sluice/express: 100 requests a minute per client, a strict 5 per 15 minutes on
// POST /login, and an export that costs 10. Run it with `npx tsx examples/express-basic/server.ts`.
import type { Store } from '@sluice/core'
import { rateLimit } from '@sluice/express'
import express from 'express'

export interface AppOptions {
  /** Default: each limiter's own MemoryStore. */
  store?: Store
  /** Set behind a reverse proxy; see the adapter's README. */
  trustProxy?: boolean | number | string
}

export function createApp(options: AppOptions = {}): express.Express {
  const app = express()
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy)
  const store = options.store === undefined ? {} : { store: options.store }

  // Before the body parser, so a rejected request is answered without its body being read.
  app.use(
    rateLimit({
      ...store,
      limit: 100,
      window: '1m',
      // An export is heavy: it costs 10 of the 100.
      cost: (req) => (req.path === '/export' ? 10 : 1),
    }),
  )
  app.use(express.json())

  app.get('/items', (req, res) => {
    res.json({ items: ['a', 'b', 'c'], remaining: req.rateLimit?.remaining })
  })
  app.get('/export', (_req, res) => {
    res.json({ export: 'ok' })
  })
  // Its own limit and its own name, so on a shared store its keys never mix with the global limiter's.
  app.post(
    '/login',
    rateLimit({
      ...store,
      name: 'login',
      limit: 5,
      window: '15m',
      // Only failed attempts count: a successful login gives its unit back.
      refund: (_req, res) => res.statusCode < 400,
    }),
    (req, res) => {
      const ok = req.body?.password === 'correct horse'
      res.status(ok ? 200 : 401).json({ ok })
    },
  )
  return app
}
