// The harness of the service-protection suites: one neutral description of an app (a shedLoad, a concurrencyLimit,
// both, in front of a counting body parser and a few routes), built with each framework. A route can hold its
// requests until the test opens the gate, so every case decides what is in flight without timing anything.
import type { IncomingHttpHeaders, Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import Router from '@koa/router'
import type { ConcurrencyLimiter, HttpConcurrencyOptions, HttpShedOptions, Shedder } from '@sluice/core'
import { concurrencyLimit as expressConcurrency, shedLoad as expressShed } from '@sluice/express'
import { concurrencyLimit as fastifyConcurrency, shedLoad as fastifyShed } from '@sluice/fastify'
import { concurrencyLimit as honoConcurrency, shedLoad as honoShed } from '@sluice/fetch/hono'
import { concurrencyLimit as koaConcurrency, shedLoad as koaShed } from '@sluice/koa'
import express from 'express'
import express4 from 'express4'
import Fastify from 'fastify'
import fastify4 from 'fastify4'
import { Hono, type Context as HonoContext } from 'hono'
import Koa from 'koa'
import bodyParser from 'koa-bodyparser'
import koa2 from 'koa2'

/** What every framework's request has in common, so one options object serves all three. */
export interface NeutralRequest {
  readonly headers: IncomingHttpHeaders
}

export interface ProtectSpec {
  readonly shed?: HttpShedOptions<NeutralRequest>
  readonly concurrency?: HttpConcurrencyOptions<NeutralRequest>
}

/** The handlers' side: who started, in what order, and how many ran at once. */
export class Handlers {
  running = 0
  mostRunning = 0
  readonly started: string[] = []
  private open = false
  private readonly waiting: (() => void)[] = []

  /** `GET /hold?id=x`: counts itself running and answers once the gate is open. */
  async hold(id: string): Promise<void> {
    this.enter(id)
    if (!this.open) await new Promise<void>((resolve) => this.waiting.push(resolve))
    this.running--
  }

  /** `GET /work?id=x`: runs for `ms` of real time. */
  async work(id: string, ms: number): Promise<void> {
    this.enter(id)
    await new Promise((resolve) => setTimeout(resolve, ms))
    this.running--
  }

  /** Lets every held request (and any later one) answer. */
  openGate(): void {
    this.open = true
    for (const resolve of this.waiting.splice(0)) resolve()
  }

  private enter(id: string): void {
    this.running++
    this.mostRunning = Math.max(this.mostRunning, this.running)
    this.started.push(id)
  }
}

export interface ProtectApp {
  readonly server: Server
  readonly url: string
  readonly handlers: Handlers
  readonly shedder: Shedder | undefined
  readonly limiter: ConcurrencyLimiter | undefined
  /** How many requests reached the body parser. */
  readonly parsed: () => number
  /** Errors that reached the framework's error handling. */
  readonly failures: unknown[]
  close(): Promise<void>
}

export interface ProtectFramework {
  readonly name: string
  start(spec: ProtectSpec): Promise<ProtectApp>
}

interface Built {
  readonly server: Server
  readonly shedder: Shedder | undefined
  readonly limiter: ConcurrencyLimiter | undefined
  readonly close?: () => Promise<void>
}

type Build = (spec: ProtectSpec, handlers: Handlers, parsed: () => void, failed: (e: unknown) => void) => Promise<Built>

function harness(name: string, build: Build): ProtectFramework {
  return {
    name,
    async start(spec) {
      const handlers = new Handlers()
      const failures: unknown[] = []
      let parsedCount = 0
      const built = await build(
        spec,
        handlers,
        () => parsedCount++,
        (error) => failures.push(error),
      )
      const { server } = built
      if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const { port } = server.address() as AddressInfo
      return {
        server,
        url: `http://127.0.0.1:${port}`,
        handlers,
        shedder: built.shedder,
        limiter: built.limiter,
        parsed: () => parsedCount,
        failures,
        close: async () => {
          handlers.openGate()
          if (built.close !== undefined) await built.close()
          else {
            server.closeAllConnections()
            await new Promise<void>((resolve) => server.close(() => resolve()))
          }
        },
      }
    },
  }
}

const idOf = (query: unknown) => String((query as Record<string, unknown>)['id'] ?? '')

function expressFramework(name: string, create: typeof express): ProtectFramework {
  return harness(name, async (spec, handlers, parsed, failed) => {
    const app = create()
    const shed = spec.shed && expressShed(spec.shed)
    const concurrency = spec.concurrency && expressConcurrency(spec.concurrency)
    // The protection comes first, before the body parser, as the README tells users to mount it.
    if (shed) app.use(shed)
    if (concurrency) app.use(concurrency)
    const raw = create.raw({ type: () => true, limit: '60mb' })
    app.use((req, res, next) => {
      parsed()
      raw(req, res, next)
    })
    app.get('/hold', async (req, res) => {
      await handlers.hold(idOf(req.query))
      res.json({ ran: true })
    })
    app.get('/work', async (req, res) => {
      await handlers.work(idOf(req.query), 20)
      res.json({ ran: true })
    })
    app.post('/upload', (_req, res) => {
      res.json({ ran: true })
    })
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      failed(error)
      res.status(500).end()
    })
    return { server: createServer(app), shedder: shed?.shedder, limiter: concurrency?.limiter }
  })
}

function koaFramework(name: string, Create: typeof Koa): ProtectFramework {
  return harness(name, async (spec, handlers, parsed, failed) => {
    const app = new Create()
    app.on('error', failed)
    const shed = spec.shed && koaShed(spec.shed)
    const concurrency = spec.concurrency && koaConcurrency(spec.concurrency)
    if (shed) app.use(shed)
    if (concurrency) app.use(concurrency)
    const parser = bodyParser({ enableTypes: ['json', 'text'], extendTypes: { text: ['*/*'] }, textLimit: '60mb' })
    app.use((ctx, next) => {
      parsed()
      return parser(ctx, next)
    })
    const router = new Router()
    router.get('/hold', async (ctx) => {
      await handlers.hold(idOf(ctx.query))
      ctx.body = { ran: true }
    })
    router.get('/work', async (ctx) => {
      await handlers.work(idOf(ctx.query), 20)
      ctx.body = { ran: true }
    })
    router.post('/upload', (ctx) => {
      ctx.body = { ran: true }
    })
    app.use(router.routes())
    return { server: createServer(app.callback()), shedder: shed?.shedder, limiter: concurrency?.limiter }
  })
}

function fastifyFramework(name: string, create: typeof Fastify): ProtectFramework {
  return harness(name, async (spec, handlers, parsed, failed) => {
    const app = create()
    app.setErrorHandler(async (error, _request, reply) => {
      failed(error)
      await reply.code(500).send()
    })
    if (spec.shed) await app.register(fastifyShed, spec.shed)
    if (spec.concurrency) await app.register(fastifyConcurrency, spec.concurrency)
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 60 * 1024 * 1024 }, (_request, body, done) => {
      parsed()
      done(null, body)
    })
    app.get('/hold', async (request) => {
      await handlers.hold(idOf(request.query))
      return { ran: true }
    })
    app.get('/work', async (request) => {
      await handlers.work(idOf(request.query), 20)
      return { ran: true }
    })
    app.post('/upload', async () => ({ ran: true }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    return {
      server: app.server,
      shedder: app.shedder,
      limiter: app.concurrencyLimiter,
      close: async () => {
        app.server.closeAllConnections()
        await app.close()
      },
    }
  })
}

// The fetch adapters' functions are given Hono's context: the neutral options read a plain object of headers.
const PROTECT_FUNCTIONS = ['key', 'skip', 'priority', 'tenant'] as const
function honoOptions<T extends object>(options: T): T {
  const converted: Record<string, unknown> = { ...(options as Record<string, unknown>) }
  for (const name of PROTECT_FUNCTIONS) {
    const fn = (options as Record<string, unknown>)[name]
    if (typeof fn === 'function') {
      converted[name] = (c: HonoContext) =>
        fn({ headers: Object.fromEntries(c.req.raw.headers) as IncomingHttpHeaders })
    }
  }
  return converted as T
}

const honoFramework = harness('hono 4', async (spec, handlers, parsed, failed) => {
  const app = new Hono()
  app.onError((error, c) => {
    failed(error)
    return c.body(null, 500)
  })
  const shed = spec.shed && honoShed(honoOptions(spec.shed) as unknown as Parameters<typeof honoShed>[0])
  const concurrency =
    spec.concurrency &&
    honoConcurrency(honoOptions(spec.concurrency) as unknown as Parameters<typeof honoConcurrency>[0])
  if (shed) app.use(shed)
  if (concurrency) app.use(concurrency)
  app.use(async (c, next) => {
    parsed()
    await c.req.arrayBuffer()
    await next()
  })
  app.get('/hold', async (c) => {
    await handlers.hold(c.req.query('id') ?? '')
    return c.json({ ran: true })
  })
  app.get('/work', async (c) => {
    await handlers.work(c.req.query('id') ?? '', 20)
    return c.json({ ran: true })
  })
  app.post('/upload', (c) => c.json({ ran: true }))
  return { server: createServer(getRequestListener(app.fetch)), shedder: shed?.shedder, limiter: concurrency?.limiter }
})

/** Express 5 and 4, Koa 3 and 2, Fastify 5 and 4, Hono 4. */
export const frameworks: readonly ProtectFramework[] = [
  expressFramework('express 5', express),
  expressFramework('express 4', express4 as unknown as typeof express),
  koaFramework('koa 3', Koa),
  koaFramework('koa 2', koa2 as unknown as typeof Koa),
  fastifyFramework('fastify 5', Fastify),
  fastifyFramework('fastify 4', fastify4 as unknown as typeof Fastify),
  honoFramework,
]
