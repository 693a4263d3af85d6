// One hello-world server for the HTTP benchmark, run in a child process of its own (forked by http.ts):
// `http-server.ts <framework> <variant> <limit>`. It listens on a free loopback port and sends the port to the
// parent over IPC. Every variant serves the same body from the same route; only the limiter in front differs.
import type { AddressInfo } from 'node:net'
import type { RequestHandler } from 'express'
import type Koa from 'koa'

export type Framework = 'express' | 'koa' | 'fastify'
export type Variant = 'bare' | 'sluice' | 'peer'

const HOST = '127.0.0.1'
const BODY = 'hello world'
const WINDOW_MS = 60_000

// Each server loads only its own framework and limiter, so a child starts quickly. The peers are loaded untyped:
// @fastify/rate-limit and @sluice/fastify both declare `config.rateLimit` on Fastify's route config, and one
// program cannot hold both declarations.
function peer<T>(name: string): T {
  return require(name) as T
}

async function express5(variant: Variant, limit: number): Promise<number> {
  const { default: express } = await import('express')
  const app = express()
  if (variant === 'sluice') {
    const { rateLimit } = await import('@sluice/express')
    app.use(rateLimit({ limit, window: WINDOW_MS }))
  }
  if (variant === 'peer') {
    const { rateLimit } = peer<{ rateLimit: (options: object) => RequestHandler }>('express-rate-limit')
    app.use(rateLimit({ windowMs: WINDOW_MS, limit }))
  }
  app.get('/', (_req, res) => {
    res.send(BODY)
  })
  return new Promise((resolve) => {
    const server = app.listen(0, HOST, () => resolve((server.address() as AddressInfo).port))
  })
}

async function koa3(variant: Variant, limit: number): Promise<number> {
  const { default: Koa } = await import('koa')
  const app = new Koa()
  if (variant === 'sluice') {
    const { rateLimit } = await import('@sluice/koa')
    app.use(rateLimit({ limit, window: WINDOW_MS }))
  }
  if (variant === 'peer') {
    const ratelimit = peer<(options: object) => Koa.Middleware>('koa-ratelimit')
    app.use(
      ratelimit({ driver: 'memory', db: new Map(), duration: WINDOW_MS, max: limit, id: (ctx: Koa.Context) => ctx.ip }),
    )
  }
  app.use((ctx) => {
    ctx.body = BODY
  })
  return new Promise((resolve) => {
    const server = app.listen(0, HOST, () => resolve((server.address() as AddressInfo).port))
  })
}

async function fastify5(variant: Variant, limit: number): Promise<number> {
  const { default: Fastify } = await import('fastify')
  const app = Fastify()
  if (variant === 'sluice') {
    const { rateLimit } = await import('@sluice/fastify')
    await app.register(rateLimit, { limit, window: WINDOW_MS })
  }
  if (variant === 'peer') {
    const plugin = peer<{ default: Parameters<typeof app.register>[0] }>('@fastify/rate-limit').default
    await app.register(plugin, { max: limit, timeWindow: WINDOW_MS })
  }
  app.get('/', async () => BODY)
  await app.listen({ port: 0, host: HOST })
  return (app.server.address() as AddressInfo).port
}

const SERVERS: Record<Framework, (variant: Variant, limit: number) => Promise<number>> = {
  express: express5,
  koa: koa3,
  fastify: fastify5,
}

async function main(): Promise<void> {
  const [framework, variant, limit] = process.argv.slice(2)
  const start = SERVERS[framework as Framework]
  if (start === undefined || !['bare', 'sluice', 'peer'].includes(variant ?? '')) {
    throw new Error(
      `usage: http-server.ts <express|koa|fastify> <bare|sluice|peer> <limit> (got ${process.argv.slice(2)})`,
    )
  }
  const port = await start(variant as Variant, Number(limit))
  process.send?.({ port })
  // The parent asks for this process's CPU time before and after each run: CPU per request is steadier than
  // throughput on a machine that other work shares.
  process.on('message', (message) => {
    if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() })
  })
  // The parent going away ends the server too.
  process.on('disconnect', () => process.exit(0))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
