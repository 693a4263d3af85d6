import { MemoryStore } from '@sluice/core'
import express from 'express'
import express4 from 'express4'
import request from 'supertest'
import { freezeDate } from '../../../scripts/frozen-date'
import { rateLimit } from '../src'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

describe('@sluice/express', () => {
  it('admits up to the limit with headers, then answers 429 with Retry-After', async () => {
    let now = 1_000_000
    const app = express()
    app.use(
      rateLimit({ limit: 2, window: '1m', algorithm: 'fixed-window', store: new MemoryStore({ clock: () => now }) }),
    )
    app.get('/', (req, res) => {
      res.json({ remaining: req.rateLimit?.remaining })
    })
    const first = await request(app).get('/').expect(200)
    expect(first.body).toEqual({ remaining: 1 })
    expect(first.get('ratelimit-policy')).toBe('"default";q=2;w=60')
    expect(first.get('ratelimit')).toBe('"default";r=1;t=20')
    await request(app).get('/').expect(200)
    const rejected = await request(app).get('/').expect(429)
    expect(rejected.get('retry-after')).toBe('20')
    expect(rejected.get('cache-control')).toBe('no-store')
    expect(rejected.body).toEqual({ error: 'rate limit exceeded', retryAfter: 20 })
    now += 20_000
    await request(app).get('/').expect(200)
  })

  it('names the option at fault', () => {
    expect(() => rateLimit({ limit: 0, window: '1m' })).toThrow('option "limit"')
    expect(() => rateLimit({ max: 5 } as never)).toThrow('option "max" is not an option of rateLimit (use `limit`)')
  })

  it.each([
    ['Express 5', express],
    ['Express 4', express4 as unknown as typeof express],
  ])('%s: an error in a key function goes to the error handler, not to an unhandled rejection', async (_, create) => {
    const app = create()
    app.use(
      rateLimit({
        limit: 10,
        window: '1m',
        key: () => {
          throw new Error('no session store')
        },
      }),
    )
    app.get('/', (_req, res) => {
      res.send('unreachable')
    })
    const seen: string[] = []
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      seen.push(error.message)
      res.status(500).send('handled')
    })
    const res = await request(app).get('/').expect(500)
    expect(res.text).toBe('handled')
    expect(seen).toEqual(['no session store'])
  })

  it('rejects a non-function onRejected at construction, naming it', () => {
    expect(() => rateLimit({ limit: 1, window: '1m', onRejected: 'text' as never })).toThrow('option "onRejected"')
  })
})
