// SLUICE_PERMISSIVE_TRUST_PROXY through each framework: trusting every proxy keys a request by the left-most
// X-Forwarded-For address, which the client writes, so the limiter says so once; a hop count says nothing.
import { rateLimit as expressLimit } from '@sluice/express'
import { rateLimit as fastifyLimit } from '@sluice/fastify'
import { rateLimit as koaLimit } from '@sluice/koa'
import express from 'express'
import Fastify from 'fastify'
import Koa from 'koa'
import request from 'supertest'

const THROUGH_TWO = '198.51.100.7, 203.0.113.9'

function recorder() {
  const warnings: string[] = []
  return { warnings, logger: { warn: (message: string) => warnings.push(message), error() {} } }
}

type Start = (
  permissive: boolean,
  logger: ReturnType<typeof recorder>['logger'],
) => Promise<{
  server: Parameters<typeof request>[0]
  close(): Promise<void>
}>

const frameworks: [string, Start][] = [
  [
    'Express',
    async (permissive, logger) => {
      const app = express()
      app.set('trust proxy', permissive ? true : 2)
      app.use(expressLimit({ limit: 10, window: '1m', logger }))
      app.get('/', (_req, res) => res.send('ok'))
      return { server: app, close: async () => {} }
    },
  ],
  [
    'Koa',
    async (permissive, logger) => {
      const app = new Koa(permissive ? { proxy: true } : { proxy: true, maxIpsCount: 2 })
      app.use(koaLimit({ limit: 10, window: '1m', logger }))
      app.use((ctx) => {
        ctx.body = 'ok'
      })
      return { server: app.callback(), close: async () => {} }
    },
  ],
  [
    'Fastify',
    async (permissive, logger) => {
      const app = Fastify({ trustProxy: permissive ? true : '127.0.0.1' })
      await app.register(fastifyLimit, { limit: 10, window: '1m', logger })
      app.get('/', async () => 'ok')
      await app.ready()
      return { server: app.server, close: () => app.close() }
    },
  ],
]

describe.each(frameworks)('%s', (_name, start) => {
  test('trusting every proxy is warned of once, at a request through several proxies', async () => {
    const { warnings, logger } = recorder()
    const app = await start(true, logger)
    try {
      await request(app.server).get('/').set('x-forwarded-for', '198.51.100.7').expect(200)
      expect(warnings).toEqual([])
      await request(app.server).get('/').set('x-forwarded-for', THROUGH_TWO).expect(200)
      await request(app.server).get('/').set('x-forwarded-for', THROUGH_TWO).expect(200)
      expect(warnings).toEqual([expect.stringContaining('trusts every one, so it is keyed by the left-most')])
      expect(warnings[0]).toContain('(198.51.100.7)')
    } finally {
      await app.close()
    }
  })

  test('a hop count is not warned of', async () => {
    const { warnings, logger } = recorder()
    const app = await start(false, logger)
    try {
      await request(app.server).get('/').set('x-forwarded-for', THROUGH_TWO).expect(200)
      expect(warnings).toEqual([])
    } finally {
      await app.close()
    }
  })
})
