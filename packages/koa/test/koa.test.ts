import Koa from 'koa'
import koa2 from 'koa2'
import request from 'supertest'
import { freezeDate } from '../../../scripts/frozen-date'
import { rateLimit } from '../src'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

describe('@sluice/koa', () => {
  it.each([
    ['Koa 3', Koa],
    ['Koa 2', koa2 as unknown as typeof Koa],
  ])('%s: an error in a key function is thrown into the middleware chain', async (_, Create) => {
    const app = new Create()
    const seen: string[] = []
    app.use(async (ctx, next) => {
      try {
        await next()
      } catch (error) {
        seen.push((error as Error).message)
        ctx.status = 500
        ctx.body = 'handled'
      }
    })
    app.use(
      rateLimit({
        limit: 10,
        window: '1m',
        key: async () => {
          throw new Error('no session store')
        },
      }),
    )
    app.use((ctx) => {
      ctx.body = 'unreachable'
    })
    const res = await request(app.callback()).get('/').expect(500)
    expect(res.text).toBe('handled')
    expect(seen).toEqual(['no session store'])
  })

  it.each([
    ['Koa 3', Koa],
    ['Koa 2', koa2 as unknown as typeof Koa],
  ])('%s: upstream middleware sees a rejection written at once, with its headers', async (_, Create) => {
    const app = new Create()
    const upstream: unknown[] = []
    app.use(async (ctx, next) => {
      ctx.set('X-Request-Id', 'r1')
      await next()
      upstream.push(ctx.status, ctx.body, ctx.state.rateLimit?.allowed)
    })
    const limit = rateLimit({ limit: 1, window: '1m' })
    const returned: unknown[] = []
    app.use((ctx, next) => {
      const result = limit(ctx, next)
      returned.push(result instanceof Promise)
      return result
    })
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    await request(app.callback()).get('/').expect(200, 'ok')
    const res = await request(app.callback()).get('/').expect(429)
    expect(res.headers['x-request-id']).toBe('r1')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/)
    expect(res.headers['ratelimit']).toMatch(/^"default";r=0;t=[1-9]\d*$/)
    expect(res.body).toEqual({ error: 'rate limit exceeded', retryAfter: Number(res.headers['retry-after']) })
    expect(upstream).toEqual([200, 'ok', true, 429, res.text, false])
    expect(returned).toEqual([true, true])
  })

  it('an onRejected that throws is thrown into the middleware chain, as from an async middleware', async () => {
    const app = new Koa()
    const seen: string[] = []
    app.use(async (ctx, next) => {
      await next().catch((error: Error) => {
        seen.push(error.message)
        ctx.status = 503
      })
    })
    const limit = rateLimit({
      limit: 1,
      window: '1m',
      onRejected: () => {
        throw new Error('no template')
      },
    })
    app.use(limit)
    app.use((ctx) => {
      ctx.body = 'ok'
    })
    await request(app.callback()).get('/').expect(200)
    await request(app.callback()).get('/').expect(503)
    expect(seen).toEqual(['no template'])
  })

  it('rejects a non-function onRejected at construction, naming it', () => {
    expect(() => rateLimit({ limit: 1, window: '1m', onRejected: 'text' as never })).toThrow('option "onRejected"')
  })
})
