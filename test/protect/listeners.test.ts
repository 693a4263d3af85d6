// Several Sluice middlewares on one response share one 'finish' and one 'close' listener. Each used to add a pair of
// its own: six (rate limits with a refund, concurrency limits, shedders) passed Node's default of 10 per event, and
// every request printed a MaxListenersExceededWarning.
import { createServer, type RequestListener, type ServerResponse } from 'node:http'
import { concurrencyLimit, rateLimit, shedLoad } from '@sluice/express'
import {
  concurrencyLimit as koaConcurrencyLimit,
  rateLimit as koaRateLimit,
  shedLoad as koaShedLoad,
} from '@sluice/koa'
import express from 'express'
import Koa from 'koa'
import supertest from 'supertest'
import { freezeDate } from '../../scripts/frozen-date'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

const MIDDLEWARES = 4 // of each kind: 12 in all

/** The listeners of a response on 'finish' and 'close', and any warning the process printed meanwhile. */
function counting() {
  const warnings: string[] = []
  const onWarning = (warning: Error) => warnings.push(warning.name)
  process.on('warning', onWarning)
  return {
    warnings,
    stop: () => process.off('warning', onWarning),
    of: (res: ServerResponse) => ({ finish: res.listenerCount('finish'), close: res.listenerCount('close') }),
  }
}

/** A server on loopback for `handler`; supertest would listen on every interface. */
async function get(handler: RequestListener) {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    return (await supertest(server).get('/').expect(200)).body
  } finally {
    server.close()
  }
}

describe('many Sluice middlewares on one response', () => {
  test('Express: 12 middlewares add one finish and one close listener, and no MaxListenersExceededWarning', async () => {
    const count = counting()
    const bare = express()
    bare.get('/', (_req, res) => {
      res.json(count.of(res))
    })
    const app = express()
    for (let i = 0; i < MIDDLEWARES; i++) {
      app.use(rateLimit({ name: `r${i}`, limit: 100, window: '1m', prefix: `l${i}`, refund: () => false }))
      app.use(concurrencyLimit({ limit: 100 }))
      app.use(shedLoad({ maxInFlight: 100 }))
    }
    app.get('/', (_req, res) => {
      res.json(count.of(res))
    })
    const without = await get(bare)
    const withSluice = await get(app)
    await new Promise((resolve) => setImmediate(resolve))
    count.stop()
    expect(withSluice).toEqual({ finish: without.finish + 1, close: without.close + 1 })
    expect(count.warnings).not.toContain('MaxListenersExceededWarning')
  })

  test('Koa: 12 middlewares add one finish and one close listener, and no MaxListenersExceededWarning', async () => {
    const count = counting()
    const bare = new Koa()
    bare.use((ctx) => {
      ctx.body = count.of(ctx.res)
    })
    const app = new Koa()
    for (let i = 0; i < MIDDLEWARES; i++) {
      app.use(koaRateLimit({ name: `r${i}`, limit: 100, window: '1m', prefix: `k${i}`, refund: () => false }))
      app.use(koaConcurrencyLimit({ limit: 100 }))
      app.use(koaShedLoad({ maxInFlight: 100 }))
    }
    app.use((ctx) => {
      ctx.body = count.of(ctx.res)
    })
    const without = await get(bare.callback())
    const withSluice = await get(app.callback())
    await new Promise((resolve) => setImmediate(resolve))
    count.stop()
    expect(withSluice).toEqual({ finish: without.finish + 1, close: without.close + 1 })
    expect(count.warnings).not.toContain('MaxListenersExceededWarning')
  })
})
