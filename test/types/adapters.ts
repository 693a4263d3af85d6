// The adapters' option types: each mistake is a compile error, each valid form compiles, for Express, Koa and the
// Fastify plugin (its options and a route's `config.rateLimit`).
import { MemoryStore } from '@sluice/core'
import { rateLimit as expressRateLimit } from '@sluice/express'
import { rateLimit as fastifyRateLimit } from '@sluice/fastify'
import { rateLimit as koaRateLimit } from '@sluice/koa'
import Fastify from 'fastify'

// @ts-expect-error no limit, no window
expressRateLimit({})
// @ts-expect-error a window algorithm needs a window
expressRateLimit({ limit: 100 })
// @ts-expect-error a bucket needs a window or a rate
expressRateLimit({ algorithm: 'token-bucket', limit: 10 })
// @ts-expect-error rate is a bucket's
expressRateLimit({ algorithm: 'fixed-window', limit: 10, window: '1m', rate: 2 })
// @ts-expect-error rules with a top-level limit
expressRateLimit({ limit: 10, rules: [{ name: 'user', limit: 10, window: '1m' }] })
// @ts-expect-error a quota has no window
expressRateLimit({ limit: 10, period: 'day', window: '1d' })
// @ts-expect-error onRejected is a function
expressRateLimit({ limit: 10, window: '1m', onRejected: 'slow down' })
// @ts-expect-error no limit, no window
koaRateLimit({})
// @ts-expect-error rate is a bucket's
koaRateLimit({ limit: 10, window: '1m', rate: 2 })
// @ts-expect-error rules with a top-level window
koaRateLimit({ window: '1m', rules: [{ name: 'user', limit: 10, window: '1m' }] })

expressRateLimit({ limit: 100, window: '1m' })
expressRateLimit({
  limit: (req) => (req.get('x-plan') === 'pro' ? 1000 : 100),
  window: (req) => (req.get('x-plan') === 'pro' ? '1m' : '1h'),
  cost: (req) => (req.path === '/export' ? 25 : 1),
  key: (req) => req.get('x-api-key') ?? req.ip ?? '',
  refund: (_req, res) => res.statusCode >= 500,
  onRejected: (_req, res) => {
    res.status(429).send('slow down')
  },
})
expressRateLimit({ algorithm: 'token-bucket', limit: 30, rate: 0.5, headers: ['ietf', 'legacy'] })
expressRateLimit({ name: 'login', limit: 5, window: '15m', block: '15m' })
expressRateLimit({ name: 'daily', limit: 1000, period: 'day', timeZone: 'Europe/Paris' })
expressRateLimit({
  store: new MemoryStore(),
  rules: [
    { name: 'user', limit: 100, window: '1m', key: (req) => req.get('x-user') ?? '' },
    { name: 'tenant', algorithm: 'token-bucket', limit: 2000, rate: 30 },
    { name: 'month', limit: (req) => (req.get('x-plan') ? 10 : 1), period: 'month' },
  ],
})
koaRateLimit({ limit: 100, window: '1m', key: (ctx) => ctx.ip, refund: (_ctx, res) => res.statusCode >= 500 })
koaRateLimit({ algorithm: 'leaky-bucket', rules: [{ name: 'sms', limit: 5, rate: 1 }] })

const app = Fastify()
// @ts-expect-error a window algorithm needs a window
app.register(fastifyRateLimit, { limit: 100 })
// @ts-expect-error rate is a bucket's
app.register(fastifyRateLimit, { limit: 100, window: '1m', rate: 3 })
app.register(fastifyRateLimit, { limit: 100, window: '1m' })
app.register(fastifyRateLimit, { global: false })
app.register(fastifyRateLimit, { global: false, window: '1m', headers: 'draft-7' })
app.register(fastifyRateLimit, { algorithm: 'token-bucket', limit: 10, rate: 1, global: true })
// @ts-expect-error a route's own limit needs a window
app.get('/a', { config: { rateLimit: { limit: 5 } } }, () => 'a')
// @ts-expect-error rate is a bucket's
app.get('/b', { config: { rateLimit: { limit: 5, window: '1m', rate: 1 } } }, () => 'b')
app.get('/c', { config: { rateLimit: { limit: 5, window: '15m' } } }, () => 'c')
app.get('/d', { config: { rateLimit: { key: (request) => request.ip } } }, () => 'd')
app.get('/e', { config: { rateLimit: false } }, () => 'e')
app.get('/f', { config: { rateLimit: { algorithm: 'token-bucket', limit: 5, rate: 1 } } }, () => 'f')
