// A small Fastify API limited by @sluice/fastify: 100 requests a minute per client, a strict 5 per 15 minutes on
// POST /login, an export that costs 10, and an unlimited health check.
// Run it with `npx tsx examples/fastify-basic/server.ts`.
import type { Store } from '@sluice/core'
import { rateLimit } from '@sluice/fastify'
import Fastify, { type FastifyInstance } from 'fastify'

export interface AppOptions {
  /** Default: one MemoryStore for the plugin; each route limit keeps its own keys in it. */
  store?: Store
  /** Set behind a reverse proxy; see the adapter's README. */
  trustProxy?: boolean | string
}

export async function createApp(options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy })
  const store = options.store === undefined ? {} : { store: options.store }

  // It runs in onRequest, before Fastify parses the body; routes may be declared before or after it.
  await app.register(rateLimit, {
    ...store,
    limit: 100,
    window: '1m',
    // An export is heavy: it costs 10 of the 100.
    cost: (request) => (request.url === '/export' ? 10 : 1),
  })

  app.get('/items', async (request) => ({ items: ['a', 'b', 'c'], remaining: request.rateLimit?.remaining }))
  app.get('/export', async () => ({ export: 'ok' }))
  app.get('/health', { config: { rateLimit: false } }, async () => ({ ok: true }))
  app.post(
    '/login',
    {
      config: {
        rateLimit: {
          limit: 5,
          window: '15m',
          cost: 1,
          // Only failed attempts count: a successful login gives its unit back.
          refund: (_request, reply) => reply.statusCode < 400,
        },
      },
    },
    async (request, reply) => {
      const ok = (request.body as { password?: string } | undefined)?.password === 'correct horse'
      return reply.code(ok ? 200 : 401).send({ ok })
    },
  )
  return app
}
