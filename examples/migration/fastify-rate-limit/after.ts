import { rateLimit } from '@sluice/fastify'
import Fastify, { type FastifyInstance } from 'fastify'

const ALLOWED = new Set(['192.0.2.10'])

export async function createApp(): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy: 'loopback' })
  await app.register(rateLimit, {
    algorithm: 'fixed-window',
    limit: 100,
    window: '1m',
    skip: (request) => ALLOWED.has(request.ip),
  })
  app.get('/items', async () => ({ items: [] }))
  app.post('/login', { config: { rateLimit: { limit: 5, window: '15m' } } }, async (_request, reply) =>
    reply.code(401).send(),
  )
  app.get('/health', { config: { rateLimit: false } }, async () => 'ok')
  return app
}
