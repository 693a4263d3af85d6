// The conformance harness: one neutral description of an app (limiters, routes, proxy trust), built with each
// framework. The cases in conformance.test.ts run against every build, so each adapter must behave the same.
import type { IncomingHttpHeaders, Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import Router from '@koa/router'
import type { Decision, HttpLimitOptions, IpKeyOptions, RateLimitHandle } from '@sluice/core'
import type { BindOptions, BoundStore, CompiledRule, Store } from '@sluice/core/store'
import { ipKey as expressIpKey, rateLimit as expressRateLimit } from '@sluice/express'
import { ipKey as fastifyIpKey, rateLimit as fastifyRateLimit } from '@sluice/fastify'
import { decisionOf, type FetchRateLimitOptions, ipKey as fetchIpKey, rateLimit as fetchRateLimit } from '@sluice/fetch'
import { type HonoRateLimitOptions, ipKey as honoIpKey, rateLimit as honoRateLimit } from '@sluice/fetch/hono'
import { ipKey as koaIpKey, rateLimit as koaRateLimit } from '@sluice/koa'
import express from 'express'
import express4 from 'express4'
import Fastify from 'fastify'
import fastify4 from 'fastify4'
import { Hono, type Context as HonoContext } from 'hono'
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
  /**
   * Route limiters add to the global one: Fastify's route config says `withGlobal: true` (Express, Koa and the fetch
   * adapters mount two middlewares, so they always do).
   */
  readonly withGlobal?: boolean
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
        config: route.limit
          ? { rateLimit: spec.withGlobal ? { ...options(route.limit), withGlobal: true } : options(route.limit) }
          : {},
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

// The fetch adapters' functions are given a Web Request (or Hono's context), whose headers are a Headers object:
// the neutral options read a plain object of headers and a statusCode, so each function is given that view.
// The view keeps the framework's own request, for the adapter's ipKey (see `viewed`).
const ORIGINAL = Symbol('the framework request')
const neutralRequest = (request: Request, original: unknown = request): NeutralRequest =>
  ({ headers: Object.fromEntries(request.headers) as IncomingHttpHeaders, [ORIGINAL]: original }) as NeutralRequest
/** An adapter's ipKey(req) for a key function of the neutral options, which is given the view. */
const viewed =
  <Req>(ipKey: (req: Req, options?: IpKeyOptions) => string) =>
  (view: never, options?: IpKeyOptions) =>
    ipKey((view as Record<symbol, Req>)[ORIGINAL] as Req, options)
const REQUEST_FUNCTIONS = ['key', 'cost', 'skip', 'limit', 'window', 'allowList', 'denyList'] as const

function fetchOptions<Req>(options: NeutralOptions, requestOf: (req: Req) => Request): Record<string, unknown> {
  const view = (fn: unknown) =>
    typeof fn === 'function'
      ? (req: Req, ...rest: unknown[]) =>
          (fn as (...args: unknown[]) => unknown)(neutralRequest(requestOf(req), req), ...rest)
      : fn
  const converted: Record<string, unknown> = { ...options }
  for (const name of REQUEST_FUNCTIONS) if (name in options) converted[name] = view(options[name])
  const rules = (options as unknown as { rules?: readonly Record<string, unknown>[] }).rules
  if (rules !== undefined) {
    converted['rules'] = rules.map((rule) => {
      const own: Record<string, unknown> = { ...rule }
      for (const name of REQUEST_FUNCTIONS) if (name in rule) own[name] = view(rule[name])
      return own
    })
  }
  const { refund } = options
  if (refund !== undefined) {
    converted['refund'] = (req: Req, outcome: { status: number }) =>
      refund(neutralRequest(requestOf(req), req), { statusCode: outcome.status })
  }
  return converted
}

/**
 * The client address behind a trusted loopback proxy, as an application on a fetch server computes it: the
 * right-most X-Forwarded-For entry that is not a trusted (loopback) proxy, when the connection came from one.
 */
function addressBehindLoopbackProxy(request: Request, peer: string | undefined): string | undefined {
  const loopback = (address: string) => address === '::1' || /^(::ffff:)?127\./.test(address)
  if (peer === undefined || !loopback(peer)) return peer
  const hops = (request.headers.get('x-forwarded-for') ?? '').split(',').map((hop) => hop.trim())
  let client = peer
  for (let i = hops.length - 1; i >= 0 && loopback(client); i--) if (hops[i] !== '') client = hops[i] as string
  return client
}

const rejectedAsText = (decision: Decision) =>
  new Response(`slow down, ${decision.retryAfterMs} ms`, { status: 429, headers: { 'content-type': 'text/plain' } })

const honoFramework = harness('hono 4', viewed(honoIpKey), async (spec, withLogger, parsed, failed) => {
  const app = new Hono()
  app.onError((error, c) => {
    failed(error)
    return c.body(null, 500)
  })
  const ip = spec.trustProxy
    ? (c: HonoContext) => addressBehindLoopbackProxy(c.req.raw, c.env.incoming.socket.remoteAddress)
    : undefined
  const limiter = (options: NeutralOptions) => {
    const own = fetchOptions<HonoContext>(withLogger(options), (c) => c.req.raw)
    if (ip !== undefined) own['ip'] = ip
    if (spec.customRejection) own['onRejected'] = (_c: HonoContext, decision: Decision) => rejectedAsText(decision)
    return honoRateLimit(own as unknown as HonoRateLimitOptions)
  }
  const global = spec.limit ? limiter(spec.limit) : undefined
  if (global) app.use(global)
  const byPath = new Map((spec.routes ?? []).flatMap((r) => (r.limit ? [[r.path, limiter(r.limit)] as const] : [])))
  // The body is read after the global limiter, as a body-parsing middleware would.
  app.use(async (c, next) => {
    parsed()
    await c.req.arrayBuffer()
    await next()
  })
  for (const route of spec.routes ?? DEFAULT_ROUTES) {
    const own = byPath.get(route.path)
    const handler = async (c: HonoContext) => {
      if (route.handle === undefined) {
        return c.json({ rateLimit: c.get('rateLimit') ?? null }, (route.status ?? 200) as 200)
      }
      const handle = route.handle.of === undefined ? (own ?? global) : byPath.get(route.handle.of)
      const headers = Object.fromEntries(c.req.raw.headers) as IncomingHttpHeaders
      const [status, body] = await act(handle, c, headers, route.handle)
      return c.json(body, status as 200)
    }
    const method = route.method === 'GET' ? 'get' : 'post'
    if (own) app[method](route.path, own, handler)
    else app[method](route.path, handler)
  }
  return { server: createServer(getRequestListener(app.fetch)) }
})

/** A plain fetch handler (no framework), each route's limit wrapping its handler, served by a Node fetch server. */
const fetchFramework = harness('fetch', viewed(fetchIpKey), async (spec, withLogger, parsed, failed) => {
  const ip = spec.trustProxy
    ? (request: Request, env: unknown) =>
        addressBehindLoopbackProxy(
          request,
          (env as { incoming: { socket: { remoteAddress?: string } } }).incoming.socket.remoteAddress,
        )
    : undefined
  const limiter = (options: NeutralOptions) => {
    const own = fetchOptions<Request>(withLogger(options), (request) => request)
    if (ip !== undefined) own['ip'] = ip
    if (spec.customRejection) own['onRejected'] = (_request: Request, decision: Decision) => rejectedAsText(decision)
    return fetchRateLimit(own as unknown as FetchRateLimitOptions)
  }
  const global = spec.limit ? limiter(spec.limit) : undefined
  const byPath = new Map((spec.routes ?? []).flatMap((r) => (r.limit ? [[r.path, limiter(r.limit)] as const] : [])))
  type Handler = (request: Request, env: unknown) => Promise<Response>
  const routes = new Map<string, Handler>()
  for (const route of spec.routes ?? DEFAULT_ROUTES) {
    const own = byPath.get(route.path)
    const respond: Handler = async (request, env) => {
      parsed()
      await request.arrayBuffer()
      if (route.handle === undefined) {
        return Response.json({ rateLimit: decisionOf(request) ?? null }, { status: route.status ?? 200 })
      }
      const limit = route.handle.of === undefined ? (own ?? global) : byPath.get(route.handle.of)
      // A request that did not go through the limit it asks about is known by what the server handed over.
      const handle = limit && {
        ...limit,
        peek: (target: Request | string | readonly string[]) => limit.peek(target, env),
        keyOf: (req: Request) => limit.keyOf(req, env),
      }
      const headers = Object.fromEntries(request.headers) as IncomingHttpHeaders
      const [status, body] = await act(handle, request, headers, route.handle)
      return Response.json(body, { status })
    }
    routes.set(`${route.method} ${route.path}`, own ? own(respond) : respond)
  }
  const notFound: Handler = async () => new Response(null, { status: 404 })
  const router: Handler = async (request, env) =>
    (routes.get(`${request.method} ${new URL(request.url).pathname}`) ?? notFound)(request, env)
  const app: Handler = global ? global(router) : router
  return {
    server: createServer(
      getRequestListener(async (request, env) => {
        try {
          return await app(request, env)
        } catch (error) {
          failed(error)
          return new Response(null, { status: 500 })
        }
      }),
    ),
  }
})

/** Express 5 and 4, Koa 3 and 2, Fastify 5 and 4, Hono 4 and a plain fetch handler. */
export const frameworks: readonly Framework[] = [
  expressFramework('express 5', express),
  expressFramework('express 4', express4 as unknown as typeof express),
  koaFramework('koa 3', Koa),
  koaFramework('koa 2', koa2 as unknown as typeof Koa),
  fastifyFramework('fastify 5', Fastify),
  fastifyFramework('fastify 4', fastify4 as unknown as typeof Fastify),
  honoFramework,
  fetchFramework,
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
