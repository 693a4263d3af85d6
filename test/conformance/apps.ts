// The conformance harness: one neutral description of an app (limiters, routes, proxy trust), built with each
// framework. The cases in conformance.test.ts run against every build, so each adapter must behave the same.
import type { IncomingHttpHeaders, Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Router from '@koa/router'
import type { Decision, HttpLimitOptions, IpKeyOptions, RateLimitHandle } from '@sluice/core'
import type { BindOptions, BoundStore, CompiledRule, Store } from '@sluice/core/store'
import { ipKey as expressIpKey, rateLimit as expressRateLimit } from '@sluice/express'
import { ipKey as fastifyIpKey, rateLimit as fastifyRateLimit } from '@sluice/fastify'
import { ipKey as koaIpKey, rateLimit as koaRateLimit } from '@sluice/koa'
import express from 'express'
import express4 from 'express4'
import Fastify from 'fastify'
import fastify4 from 'fastify4'
import Koa from 'koa'
import bodyParser from 'koa-bodyparser'
import koa2 from 'koa2'

/** What every framework's request and response have in common, so one options object serves all three. */
export interface NeutralRequest {
  readonly headers: IncomingHttpHeaders
}
export interface NeutralResponse {
  readonly statusCode: number
}
export type NeutralOptions = HttpLimitOptions<NeutralRequest, NeutralResponse>

export interface RouteSpec {
  readonly method: 'GET' | 'POST'
  readonly path: string
  /** A limiter for this route alone. */
  readonly limit?: NeutralOptions
  /** The status the handler answers. Default 200. */
  readonly status?: number
  /** Instead of echoing the decision, the handler uses a limiter's handle (see `act`). */
  readonly handle?: HandleAction
}

/**
 * What a handler does with a limiter's handle, as an app would: `peek` (the request's decision, charging nothing),
 * `peek-key` (by the key in X-Key), `keyOf`, `reset` (the request's keys), `login` (a password check: X-Password
 * 'right' resets the request's keys and answers 200, anything else answers 401).
 */
export interface HandleAction {
  readonly action: 'peek' | 'peek-key' | 'keyOf' | 'reset' | 'login'
  /** The path of the route whose own limiter's handle to use; default: the limiter this route goes through. */
  readonly of?: string
}

/** The status and JSON body a handle action answers with. */
async function act<Req>(
  handle: RateLimitHandle<Req> | undefined,
  req: Req,
  headers: IncomingHttpHeaders,
  { action }: HandleAction,
): Promise<[number, unknown]> {
  if (handle === undefined) throw new Error('no limiter handle for this route')
  switch (action) {
    case 'peek':
      return [200, { peek: await handle.peek(req) }]
    case 'peek-key':
      return [200, { peek: await handle.peek(String(headers['x-key'])) }]
    case 'keyOf':
      return [200, { keys: await handle.keyOf(req) }]
    case 'reset':
      await handle.reset(await handle.keyOf(req))
      return [200, { reset: true }]
    case 'login':
      if (headers['x-password'] !== 'right') return [401, { login: 'failed' }]
      await handle.reset(await handle.keyOf(req))
      return [200, { login: 'ok' }]
  }
}

export interface AppSpec {
  /** The limiter in front of every route. */
  readonly limit?: NeutralOptions
  /** Default: GET / answering 200. */
  readonly routes?: readonly RouteSpec[]
  /** Trust a proxy on loopback (Express 'trust proxy', Koa app.proxy, Fastify trustProxy). */
  readonly trustProxy?: boolean
  /** Install the framework's own onRejected, answering 429 text "slow down, <retryAfterMs> ms". */
  readonly customRejection?: boolean
}

export interface RunningApp {
  readonly server: Server
  readonly url: string
  /** How many requests reached the body parser. */
  readonly parsed: () => number
  /** What the limiters logged. */
  readonly warnings: string[]
  readonly errors: string[]
  /** Errors that reached the framework's error handling (a 500). */
  readonly failures: unknown[]
  close(): Promise<void>
}

export interface Framework {
  readonly name: string
  /** The adapter's `ipKey(req, options)`, for a key function of the neutral options. */
  readonly ipKey: (req: NeutralRequest, options?: IpKeyOptions) => string
  start(spec: AppSpec): Promise<RunningApp>
}

/** Every route answers `{ rateLimit: <the decision on the request, or null> }`. */
const DEFAULT_ROUTES: readonly RouteSpec[] = [{ method: 'GET', path: '/' }]

interface Built {
  readonly server: Server
  readonly close?: () => Promise<void>
}

function harness(
  name: string,
  ipKey: (req: never, options?: IpKeyOptions) => string,
  build: (
    spec: AppSpec,
    withLogger: (options: NeutralOptions) => NeutralOptions,
    parsed: () => void,
    failed: (error: unknown) => void,
  ) => Promise<Built>,
): Framework {
  return {
    name,
    ipKey: ipKey as Framework['ipKey'],
    async start(spec) {
      const warnings: string[] = []
      const errors: string[] = []
      const failures: unknown[] = []
      let parsedCount = 0
      const logger = {
        warn: (message: string) => warnings.push(message),
        error: (message: string) => errors.push(message),
      }
      const withLogger = (options: NeutralOptions): NeutralOptions => ({ logger, ...options })
      const built = await build(
        spec,
        withLogger,
        () => parsedCount++,
        (error) => failures.push(error),
      )
      const { server } = built
      if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const { port } = server.address() as AddressInfo
      return {
        server,
        url: `http://127.0.0.1:${port}`,
        parsed: () => parsedCount,
        warnings,
        errors,
        failures,
        close: built.close ?? (() => new Promise<void>((resolve) => server.close(() => resolve()))),
      }
    },
  }
}

function expressFramework(name: string, create: typeof express): Framework {
  return harness(name, expressIpKey, async (spec, withLogger, parsed, failed) => {
    const app = create()
    if (spec.trustProxy) app.set('trust proxy', 'loopback')
    const onRejected = spec.customRejection
      ? (_req: unknown, res: express.Response, decision: Decision) => {
          res.status(429).type('text/plain').send(`slow down, ${decision.retryAfterMs} ms`)
        }
      : undefined
    const limiter = (options: NeutralOptions) =>
      expressRateLimit(onRejected ? { ...withLogger(options), onRejected } : withLogger(options))
    const global = spec.limit ? limiter(spec.limit) : undefined
    if (global) app.use(global)
    const byPath = new Map((spec.routes ?? []).flatMap((r) => (r.limit ? [[r.path, limiter(r.limit)] as const] : [])))
    // The body parser comes after the global limiter, as the README tells users to mount it.
    const raw = create.raw({ type: () => true, limit: '60mb' })
    app.use((req, res, next) => {
      parsed()
      raw(req, res, next)
    })
    for (const route of spec.routes ?? DEFAULT_ROUTES) {
      const own = byPath.get(route.path)
      const handler = (req: express.Request, res: express.Response, next: express.NextFunction) => {
        if (route.handle === undefined) {
          res.status(route.status ?? 200).json({ rateLimit: req.rateLimit ?? null })
          return
        }
        const handle = route.handle.of === undefined ? (own ?? global) : byPath.get(route.handle.of)
        act(handle, req, req.headers, route.handle).then(([status, body]) => res.status(status).json(body), next)
      }
      const method = route.method === 'GET' ? 'get' : 'post'
      if (own) app[method](route.path, own, handler)
      else app[method](route.path, handler)
    }
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      failed(error)
      res.status(500).end()
    })
    return { server: createServer(app) }
  })
}

function koaFramework(name: string, Create: typeof Koa): Framework {
  return harness(name, koaIpKey, async (spec, withLogger, parsed, failed) => {
    const app = new Create()
    app.on('error', failed)
    if (spec.trustProxy) app.proxy = true
    const onRejected = spec.customRejection
      ? (ctx: Koa.Context, decision: Decision) => {
          ctx.status = 429
          ctx.type = 'text/plain'
          ctx.body = `slow down, ${decision.retryAfterMs} ms`
        }
      : undefined
    const limiter = (options: NeutralOptions) =>
      koaRateLimit(onRejected ? { ...withLogger(options), onRejected } : withLogger(options))
    const global = spec.limit ? limiter(spec.limit) : undefined
    if (global) app.use(global)
    const byPath = new Map((spec.routes ?? []).flatMap((r) => (r.limit ? [[r.path, limiter(r.limit)] as const] : [])))
    const parser = bodyParser({ enableTypes: ['json', 'text'], extendTypes: { text: ['*/*'] }, textLimit: '60mb' })
    app.use((ctx, next) => {
      parsed()
      return parser(ctx, next)
    })
    const router = new Router()
    for (const route of spec.routes ?? DEFAULT_ROUTES) {
      const own = byPath.get(route.path)
      const handler = async (ctx: Koa.Context) => {
        if (route.handle === undefined) {
          ctx.status = route.status ?? 200
          ctx.body = { rateLimit: ctx.state.rateLimit ?? null }
          return
        }
        const handle = route.handle.of === undefined ? (own ?? global) : byPath.get(route.handle.of)
        ;[ctx.status, ctx.body] = await act(handle, ctx, ctx.headers, route.handle)
      }
      const method = route.method === 'GET' ? 'get' : 'post'
      if (own) router[method](route.path, own, handler)
      else router[method](route.path, handler)
    }
    app.use(router.routes())
    return { server: createServer(app.callback()) }
  })
}

function fastifyFramework(name: string, create: typeof Fastify): Framework {
  return harness(name, fastifyIpKey, async (spec, withLogger, parsed, failed) => {
    const app = create(spec.trustProxy ? { trustProxy: 'loopback' } : {})
    app.setErrorHandler(async (error, _request, reply) => {
      failed(error)
      await reply.code(500).send()
    })
    const onRejected = spec.customRejection
      ? async (_request: unknown, reply: import('fastify').FastifyReply, decision: Decision) => {
          await reply.code(429).type('text/plain').send(`slow down, ${decision.retryAfterMs} ms`)
        }
      : undefined
    const options = (limit: NeutralOptions) => (onRejected ? { ...withLogger(limit), onRejected } : withLogger(limit))
    await app.register(fastifyRateLimit, spec.limit ? options(spec.limit) : { global: false })
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 60 * 1024 * 1024 }, (_request, body, done) => {
      parsed()
      done(null, body)
    })
    for (const route of spec.routes ?? DEFAULT_ROUTES) {
      app.route({
        method: route.method,
        url: route.path,
        config: route.limit ? { rateLimit: options(route.limit) } : {},
        handler: async (request, reply) => {
          if (route.handle === undefined) {
            await reply.code(route.status ?? 200).send({ rateLimit: request.rateLimit ?? null })
            return
          }
          const { of } = route.handle
          const target = spec.routes?.find((r) => r.path === of)
          const handle =
            target === undefined ? app.rateLimit.of(request) : app.rateLimit.route(target.method, target.path)
          const [status, body] = await act(handle, request, request.headers, route.handle)
          await reply.code(status).send(body)
        },
      })
    }
    await app.listen({ port: 0, host: '127.0.0.1' })
    return { server: app.server, close: () => app.close() }
  })
}

/** Express 5 and 4, Koa 3 and 2, Fastify 5 and 4. */
export const frameworks: readonly Framework[] = [
  expressFramework('express 5', express),
  expressFramework('express 4', express4 as unknown as typeof express),
  koaFramework('koa 3', Koa),
  koaFramework('koa 2', koa2 as unknown as typeof Koa),
  fastifyFramework('fastify 5', Fastify),
  fastifyFramework('fastify 4', fastify4 as unknown as typeof Fastify),
]

/** A store that remembers every key it was asked about, around a real MemoryStore. */
export class RecordingStore implements Store {
  readonly keys: string[] = []
  constructor(private readonly inner: Store) {}
  bind(rules: readonly CompiledRule[], options?: BindOptions): BoundStore {
    const bound = this.inner.bind(rules, options)
    return {
      rules,
      apply: (keys, cost, charge) => {
        this.keys.push(...keys)
        return bound.apply(keys, cost, charge)
      },
      refund: (keys, cost) => bound.refund(keys, cost),
      reset: (keys) => bound.reset(keys),
    }
  }
}

/** A store whose every call fails the way a broken backend does. */
export class FailingStore implements Store {
  constructor(private readonly error: () => Error) {}
  bind(rules: readonly CompiledRule[]): BoundStore {
    return {
      rules,
      apply: (): Promise<Decision> => Promise.reject(this.error()),
      refund: () => Promise.reject(this.error()),
      reset: () => Promise.reject(this.error()),
    }
  }
}
