import Koa from 'koa'
import ratelimit from 'koa-ratelimit'

export function createApp(): Koa {
  const app = new Koa()
  app.use(
    ratelimit({
      driver: 'memory',
      db: new Map(), // without it, the memory driver starts a new count on every request
      duration: 60_000,
      max: 100,
      id: (ctx) => ctx.get('x-api-key') || ctx.ip,
      whitelist: (ctx) => ctx.path === '/health',
    }),
  )
  app.use((ctx) => {
    ctx.body = { items: [] }
  })
  return app
}
