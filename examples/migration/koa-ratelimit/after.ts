import { rateLimit } from '@sluice/koa'
import Koa from 'koa'

export function createApp(): Koa {
  const app = new Koa()
  app.use(
    rateLimit({
      algorithm: 'fixed-window',
      limit: 100,
      window: '1m',
      key: (ctx) => ctx.get('x-api-key') || ctx.ip,
      skip: (ctx) => ctx.path === '/health',
      headers: 'legacy',
    }),
  )
  app.use((ctx) => {
    ctx.body = { items: [] }
  })
  return app
}
