// @sluice/express/compat against express-rate-limit itself: the same app built twice, once on each, on Express 5 and
// on Express 4, is sent the same requests at the same instants, and must answer the same statuses, headers and
// bodies, put the same fields on the request and log the same checks. The only difference allowed is the one
// docs/migration.md names: Cache-Control: no-store on a refusal.
//
// Only Date is faked (sockets and timers run as usual): both limiters read the time from it.
import { type Options as CompatOptions, rateLimit as compatRateLimit, type RateLimitInfo } from '@sluice/express/compat'
import express from 'express'
import { rateLimit as erlRateLimit } from 'express-rate-limit'
import express4 from 'express4'
import supertest from 'supertest'
import { fakeDateOnly } from '../../scripts/frozen-date'

type Flavor = typeof express

/** `req.rateLimit` as the compat limiter types it (@sluice/express, in this program too, declares a Decision there). */
const infoOf = (req: express.Request) => (req as unknown as { rateLimit: RateLimitInfo }).rateLimit
const FLAVORS: readonly [string, Flavor][] = [
  ['Express 5', express],
  ['Express 4', express4 as unknown as Flavor],
]

/** A limiter factory: express-rate-limit's or the compat one. */
type Factory = (options: Record<string, unknown>) => express.RequestHandler & {
  resetKey(key: string): unknown
  getKey(key: string): unknown
}
const erl = erlRateLimit as unknown as Factory
const compat = compatRateLimit as unknown as Factory

interface Step {
  readonly method?: 'get' | 'post'
  readonly path?: string
  readonly headers?: Readonly<Record<string, string>>
  /** Moves the frozen clock forward before the request. */
  readonly advanceMs?: number
}

interface Scenario {
  readonly name: string
  readonly options: () => Record<string, unknown>
  readonly steps: readonly Step[]
  /** Express's 'trust proxy' (default: off). */
  readonly trustProxy?: boolean | number
}

/**
 * What a limiter logged: the codes of its checks, or the other errors it was given (a store's). The wording of the
 * messages is each library's own.
 */
function recordingLogger(seen: string[]) {
  const record = (error: unknown) => {
    const code = (error as { code?: unknown } | undefined)?.code
    seen.push(typeof code === 'string' ? code : `error: ${(error as Error)?.message ?? String(error)}`)
  }
  return { warn: record, error: record }
}

function buildApp(flavor: Flavor, factory: Factory, scenario: Scenario, logged: string[]): express.Express {
  const app = flavor()
  app.set('trust proxy', scenario.trustProxy ?? false)
  const options = scenario.options()
  const limiter = factory({ logger: recordingLogger(logged), ...options })
  // The middleware's handle on its store, read around the limiter.
  app.get('/admin/key', async (req, res) => {
    res.json({ info: (await limiter.getKey(req.get('x-target') ?? '')) ?? null })
  })
  app.post('/admin/reset', async (req, res) => {
    await limiter.resetKey(req.get('x-target') ?? '')
    res.sendStatus(204)
  })
  app.use(limiter)
  app.use((req, res) => {
    const property = (options['requestPropertyName'] as string | undefined) ?? 'rateLimit'
    const info = (req as unknown as Record<string, unknown>)[property] as Record<string, unknown> | undefined
    res.status(Number(req.get('x-status') ?? 200)).json({ info, current: info?.['current'] ?? null })
  })
  app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).json({ failed: error.message })
  })
  return app
}

interface Seen {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

async function send(app: express.Express, step: Step): Promise<Seen> {
  let test = supertest(app)[step.method ?? 'get'](step.path ?? '/')
  for (const [name, value] of Object.entries(step.headers ?? {})) test = test.set(name, value)
  const response = await test
  return { status: response.status, headers: response.headers as Record<string, string>, body: response.text }
}

const START = Date.UTC(2026, 11, 2, 9, 30, 0, 250)

function freeze(): void {
  fakeDateOnly(START)
}

afterEach(() => jest.useRealTimers())

/** Runs a scenario through both limiters; answers what each saw, step by step, and what each logged. */
async function runBoth(flavor: Flavor, scenario: Scenario) {
  freeze()
  const logs = { erl: [] as string[], compat: [] as string[] }
  const apps = {
    erl: buildApp(flavor, erl, scenario, logs.erl),
    compat: buildApp(flavor, compat, scenario, logs.compat),
  }
  const seen = { erl: [] as Seen[], compat: [] as Seen[] }
  for (const step of scenario.steps) {
    if (step.advanceMs !== undefined) jest.setSystemTime(Date.now() + step.advanceMs)
    // The Date that express-rate-limit writes with X-RateLimit-Reset is the (frozen) instant of the request; when
    // nothing writes one, Node's own is on the real clock, and two responses may straddle a second.
    const frozen = new Date(Date.now()).toUTCString()
    for (const side of ['erl', 'compat'] as const) {
      const response = await send(apps[side], step)
      if (response.headers['date'] !== frozen) response.headers['date'] = "Node's, on the real clock"
      seen[side].push(response)
    }
  }
  return { seen, logs }
}

/** The headers but Cache-Control, the one field the compat limiter adds (to refusals only). */
function withoutCacheControl(headers: Record<string, string>): Record<string, string> {
  const { 'cache-control': _omitted, ...rest } = headers
  return rest
}

const repeat = (count: number, step: Step = {}): Step[] => Array<Step>(count).fill(step)
const from = (address: string, extra: Record<string, string> = {}): Step => ({
  headers: { 'x-forwarded-for': address, ...extra },
})

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'defaults: 5 a minute per IP, X-RateLimit-* with a Date, a text 429 with Retry-After; a new window later',
    options: () => ({}),
    steps: [...repeat(7), { advanceMs: 59_000 }, { advanceMs: 1_000 }, {}],
  },
  {
    name: 'standardHeaders true is draft-6: RateLimit-Limit, -Remaining, -Reset and RateLimit-Policy',
    options: () => ({ limit: 2, standardHeaders: true, legacyHeaders: false }),
    steps: [...repeat(3), { advanceMs: 30_500 }, { advanceMs: 29_600 }],
  },
  {
    name: 'draft-7: one RateLimit list and RateLimit-Policy, beside the legacy fields',
    options: () => ({ windowMs: 15 * 60 * 1000, limit: 3, standardHeaders: 'draft-7' }),
    steps: [...repeat(4), { advanceMs: 61_999 }],
  },
  {
    name: 'draft-8: named items with the pk partition key, the default identifier in hours',
    options: () => ({ windowMs: 2 * 60 * 60 * 1000, limit: 2, standardHeaders: 'draft-8', legacyHeaders: false }),
    steps: [...repeat(3), from('192.0.2.9')],
    trustProxy: 1,
  },
  {
    name: 'draft-8: the default identifier in seconds, minutes and days, and a given one',
    options: () => ({ windowMs: 30_000, limit: 1, standardHeaders: 'draft-8' }),
    steps: repeat(2),
  },
  {
    name: 'draft-8 with a window of days',
    options: () => ({ windowMs: 3 * 24 * 60 * 60 * 1000, limit: 1, standardHeaders: 'draft-8' }),
    steps: repeat(2),
  },
  {
    name: 'draft-8 with a window of one minute and an identifier function',
    options: () => ({ windowMs: 60_000, limit: 1, standardHeaders: 'draft-8', identifier: async () => 'api' }),
    steps: repeat(2),
  },
  {
    name: 'an object message is sent as JSON with the statusCode given',
    options: () => ({ limit: 1, statusCode: 503, message: { error: 'slow down' } }),
    steps: repeat(2),
  },
  {
    name: 'a message function (async) of the request',
    options: () => ({
      limit: 1,
      message: async (req: express.Request) => `no more for ${infoOf(req).key}`,
    }),
    steps: repeat(2),
  },
  {
    name: 'a handler gets the request info and the options used',
    options: () => ({
      limit: 1,
      handler: (req: express.Request, res: express.Response, _next: unknown, used: CompatOptions) => {
        res.status(used.statusCode).json({ used: infoOf(req).used, limit: used.limit, windowMs: used.windowMs })
      },
    }),
    steps: repeat(3),
  },
  {
    name: 'limit as a function of the request (per plan), and max as its old name',
    options: () => ({ max: (req: express.Request) => (req.get('x-plan') === 'pro' ? 3 : 1) }),
    steps: [...repeat(2), ...repeat(3, { headers: { 'x-plan': 'pro' } })],
  },
  {
    name: 'keyGenerator, skip and requestPropertyName',
    options: () => ({
      limit: 1,
      keyGenerator: (req: express.Request) => req.get('x-key') ?? 'anonymous',
      skip: (req: express.Request) => req.path === '/health',
      requestPropertyName: 'quota',
    }),
    steps: [
      { headers: { 'x-key': 'a' } },
      { headers: { 'x-key': 'a' } },
      { headers: { 'x-key': 'b' } },
      { path: '/health', headers: { 'x-key': 'a' } },
      {},
    ],
  },
  {
    name: 'skipFailedRequests: failed responses (status 400 and more) are taken off the count',
    options: () => ({ limit: 2, skipFailedRequests: true }),
    steps: [...repeat(3, { headers: { 'x-status': '500' } }), {}, {}, {}, { headers: { 'x-status': '404' } }],
  },
  {
    name: 'skipSuccessfulRequests with a requestWasSuccessful of its own',
    options: () => ({
      limit: 2,
      skipSuccessfulRequests: true,
      requestWasSuccessful: (_req: express.Request, res: express.Response) => res.statusCode < 300,
    }),
    steps: [...repeat(3), ...repeat(3, { headers: { 'x-status': '302' } })],
  },
  {
    name: 'IPv6 clients count per /56 by default; an IPv4-mapped address is its IPv4 address',
    options: () => ({ limit: 2, standardHeaders: 'draft-8' }),
    steps: [
      from('2001:db8:0:100::1'),
      from('2001:db8:0:1ff::2'),
      from('2001:db8:0:200::1'),
      from('::ffff:192.0.2.1'),
      from('192.0.2.1'),
      from('192.0.2.1'),
    ],
    trustProxy: 1,
  },
  {
    name: 'ipv6Subnet 64',
    options: () => ({ limit: 1, ipv6Subnet: 64 }),
    steps: [from('2001:db8:0:100::1'), from('2001:db8:0:100::2'), from('2001:db8:0:101::1')],
    trustProxy: 1,
  },
  {
    name: 'ipv6Subnet false counts whole addresses, as spelled',
    options: () => ({ limit: 1, ipv6Subnet: false }),
    steps: [from('2001:db8::1'), from('2001:db8::2'), from('2001:db8::1')],
    trustProxy: 1,
  },
  {
    name: 'ipv6Subnet as a function of the request',
    options: () => ({ limit: 1, ipv6Subnet: async (req: express.Request) => (req.get('x-wide') ? 48 : 64) }),
    steps: [from('2001:db8:0:100::1'), from('2001:db8:0:101::1', { 'x-wide': '1' }), from('2001:db8:0:102::1')],
    trustProxy: 1,
  },
  {
    name: 'retryAfter overrides the Retry-After a refusal gets',
    options: () => ({ limit: 1, retryAfter: async () => 42, standardHeaders: 'draft-7' }),
    steps: repeat(2),
  },
  {
    name: 'no headers at all when both header options are off (not even Retry-After)',
    options: () => ({ limit: 1, legacyHeaders: false, standardHeaders: false }),
    steps: repeat(2),
  },
  {
    name: 'headers: false, the old name of legacyHeaders',
    options: () => ({ limit: 1, headers: false, standardHeaders: 'draft-6' }),
    steps: repeat(2),
  },
  {
    name: 'a legacy store (incr with a callback) and one that gives no reset time',
    options: () => {
      const hits = new Map<string, number>()
      return {
        limit: 2,
        standardHeaders: 'draft-7',
        store: {
          incr(key: string, done: (error: Error | undefined, totalHits: number, resetTime: Date | undefined) => void) {
            hits.set(key, (hits.get(key) ?? 0) + 1)
            done(undefined, hits.get(key) ?? 0, undefined)
          },
          decrement: (key: string) => void hits.set(key, (hits.get(key) ?? 1) - 1),
          resetKey: (key: string) => void hits.delete(key),
        },
      }
    },
    steps: repeat(3),
  },
  {
    name: 'a store that fails: the error goes to the error handler',
    options: () => failingStore(false),
    steps: repeat(2),
  },
  {
    name: 'a store that fails with passOnStoreError: the request goes through, without headers',
    options: () => failingStore(true),
    steps: repeat(2),
  },
  {
    name: 'getKey and resetKey reach the store',
    options: () => ({ limit: 2 }),
    steps: [
      {},
      {},
      { path: '/admin/key', headers: { 'x-target': '::ffff:127.0.0.1' } },
      { path: '/admin/key', headers: { 'x-target': '127.0.0.1' } },
      {},
      { method: 'post', path: '/admin/reset', headers: { 'x-target': '127.0.0.1' } },
      { path: '/admin/key', headers: { 'x-target': '127.0.0.1' } },
      {},
    ],
  },
  {
    name: 'checks: trust proxy true is logged once',
    options: () => ({ limit: 3 }),
    steps: [from('192.0.2.1'), from('192.0.2.2')],
    trustProxy: true,
  },
  {
    name: 'checks: X-Forwarded-For while trust proxy is off, and a Forwarded header',
    options: () => ({ limit: 3 }),
    steps: [from('192.0.2.1'), { headers: { forwarded: 'for=192.0.2.3' } }],
  },
  {
    name: 'checks: a keyGenerator that reads req.ip without ipKeyGenerator, next to ipv6Subnet',
    options: () => ({ limit: 3, ipv6Subnet: 60, keyGenerator: (req: express.Request) => `k:${req.ip}` }),
    steps: repeat(1),
  },
  {
    name: 'checks: limit 0 refuses everything and is warned about; a store answering 0 hits is an error',
    options: () => ({
      limit: 0,
      store: { increment: () => ({ totalHits: 0, resetTime: undefined }), decrement() {}, resetKey() {} },
    }),
    steps: repeat(2),
  },
  {
    name: 'checks: validate false logs nothing',
    options: () => ({ limit: 3, validate: false }),
    steps: [from('192.0.2.1')],
    trustProxy: true,
  },
  {
    name: 'checks: validate with some checks off',
    options: () => ({ limit: 3, validate: { trustProxy: false, default: true } }),
    steps: [from('192.0.2.1')],
    trustProxy: true,
  },
]

function failingStore(passOnStoreError: boolean): Record<string, unknown> {
  return {
    passOnStoreError,
    store: {
      increment: async () => {
        throw new Error('store down')
      },
      decrement() {},
      resetKey() {},
    },
  }
}

describe.each(FLAVORS)('@sluice/express/compat and express-rate-limit on %s', (_name, flavor) => {
  test.each(SCENARIOS.map((scenario) => [scenario.name, scenario] as const))('%s', async (_title, scenario) => {
    const { seen, logs } = await runBoth(flavor, scenario)
    for (const [i, peer] of seen.erl.entries()) {
      const ours = seen.compat[i] as Seen
      expect({ step: i, status: ours.status, body: ours.body }).toEqual({
        step: i,
        status: peer.status,
        body: peer.body,
      })
      expect({ step: i, headers: withoutCacheControl(ours.headers) }).toEqual({ step: i, headers: peer.headers })
      expect(ours.headers['cache-control']).toBe(
        ours.status === 429 || (ours.status === 503 && peer.status === 503) ? 'no-store' : undefined,
      )
    }
    expect(logs.compat).toEqual(logs.erl)
  })

  test('the scenarios see refusals, headers and logs, so the comparison above compares something', async () => {
    const { seen, logs } = await runBoth(flavor, SCENARIOS[0] as Scenario)
    expect(seen.erl.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 200, 200])
    expect(seen.compat[5]?.headers).toMatchObject({
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'retry-after': '60',
      'cache-control': 'no-store',
    })
    expect(seen.compat[5]?.body).toBe('Too many requests, please try again later.')
    expect(logs.erl).toEqual([])
    const checks = await runBoth(flavor, SCENARIOS.find((s) => s.name.startsWith('checks: trust proxy')) as Scenario)
    expect(checks.logs.erl).toEqual(['ERR_ERL_PERMISSIVE_TRUST_PROXY'])
  })

  test('cacheControl: false answers a refusal exactly as express-rate-limit does', async () => {
    freeze()
    const build = (factory: Factory, extra: Record<string, unknown>) =>
      buildApp(
        flavor,
        factory,
        { name: '', options: () => ({ limit: 1, standardHeaders: 'draft-8', ...extra }), steps: [] },
        [],
      )
    const peer = build(erl, {})
    const ours = build(compat, { cacheControl: false })
    await send(peer, {})
    await send(ours, {})
    const refusedByPeer = await send(peer, {})
    const refusedByUs = await send(ours, {})
    expect(refusedByUs.status).toBe(429)
    expect(refusedByUs).toEqual(refusedByPeer)
  })
})
