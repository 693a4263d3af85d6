// A small Koa API limited by @sluice/koa: 100 requests a minute per client, a strict 5 per 15 minutes on
// POST /login, and an export that costs 10. Run it with `npx tsx examples/koa-basic/server.ts`.
import Router from '@koa/router'
import type { Store } from '@sluice/core'
import { rateLimit } from '@sluice/koa'
import Koa from 'koa'
import bodyParser from 'koa-bodyparser'

export interface AppOptions {
  /** Default: each limiter's own MemoryStore. */
  store?: Store
  /** Trust X-Forwarded-For: only behind a proxy that is the only way in; see the adapter's README. */
  proxy?: boolean
}

export function createApp(options: AppOptions = {}): Koa {
  const app = new Koa({ proxy: options.proxy ?? false, maxIpsCount: 1 })
  const store = options.store === undefined ? {} : { store: options.store }

  // Before the body parser, so a rejected request is answered without its body being read.
  app.use(
    rateLimit({
      ...store,
      limit: 100,
      window: '1m',
      // An export is heavy: it costs 10 of the 100.
      cost: (ctx) => (ctx.path === '/export' ? 10 : 1),
    }),
  )
  app.use(bodyParser())

  const router = new Router()
  router.get('/items', (ctx) => {
    ctx.body = { items: ['a', 'b', 'c'], remaining: ctx.state.rateLimit?.remaining }
  })
  router.get('/export', (ctx) => {
    ctx.body = { export: 'ok' }
  })
  // Its own limit and its own name, so on a shared store its keys never mix with the global limiter's.
  router.post(
    '/login',
    rateLimit({
      ...store,
      name: 'login',
      limit: 5,
      window: '15m',
      // Only failed attempts count: a successful login gives its unit back.
      refund: (_ctx, res) => res.statusCode < 400,
    }),
    (ctx) => {
      const body = ctx.request.body as { password?: string } | undefined
      const ok = body?.password === 'correct horse'
      ctx.status = ok ? 200 : 401
      ctx.body = { ok }
    },
  )
  app.use(router.routes())
  return app
}
