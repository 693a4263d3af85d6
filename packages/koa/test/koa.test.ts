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

  it('rejects a non-function onRejected at construction, naming it', () => {
    expect(() => rateLimit({ limit: 1, window: '1m', onRejected: 'text' as never })).toThrow('option "onRejected"')
  })
})
