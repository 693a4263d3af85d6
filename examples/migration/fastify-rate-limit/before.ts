import rateLimit from '@fastify/rate-limit'
import Fastify, { type FastifyInstance } from 'fastify'

export async function createApp(): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy: 'loopback' })
  await app.register(rateLimit, { max: 100, timeWindow: '1 minute', allowList: ['192.0.2.10'] })
  app.get('/items', async () => ({ items: [] }))
  app.post('/login', { config: { rateLimit: { max: 5, timeWindow: '15 minutes' } } }, async (_request, reply) =>
    reply.code(401).send(),
  )
  app.get('/health', { config: { rateLimit: false } }, async () => 'ok')
  return app
}
