// The root README's Fastify quick start, quoted there word for word; test/docs/readme.test.ts runs it over HTTP.
// #region quick-start
import { rateLimit } from '@sluice/fastify'
import Fastify from 'fastify'

const app = Fastify()
app.register(rateLimit, { limit: 100, window: '1m' }) // every route: 100 requests a minute per client IP
// a route's own limit, counted apart: 5 attempts per 15 minutes
app.post('/login', { config: { rateLimit: { limit: 5, window: '15m' } } }, async () => ({ ok: true }))
app.get('/', async (request) => ({ hello: 'world', remaining: request.rateLimit?.remaining }))
app.listen({ port: 3000 })
// #endregion quick-start
