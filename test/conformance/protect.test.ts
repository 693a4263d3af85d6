// Quotas, plans, blocks, allow and deny lists and the handle on keys, through real HTTP on every framework (one
// table of cases, as conformance.test.ts): what "Protecting the service" promises a user sees.
import { createLimiter, type Decision, type HeaderMode, InvalidOptionError, MemoryStore } from '@sluice/core'
import { parseDictionary, parseList } from 'structured-headers'
import supertest from 'supertest'
import { type AppSpec, type Framework, frameworks, RecordingStore, type RunningApp } from './apps'

interface Case {
  readonly name: string
  run(start: (spec: AppSpec) => Promise<RunningApp>): Promise<void>
}

const HOUR_MS = 3_600_000
const QUIET = { warn() {}, error() {} }

function clocked(start: number) {
  const clock = { now: start, read: () => clock.now }
  return { clock, store: new MemoryStore({ clock: clock.read }) }
}

const get = (app: RunningApp, path = '/') => supertest(app.server).get(path)
const post = (app: RunningApp, path: string) => supertest(app.server).post(path)
const decisionOf = (res: supertest.Response) => res.body.rateLimit as Decision | null

function field(res: supertest.Response, name: string): string {
  const value = res.get(name)
  if (value === undefined) throw new Error(`the response has no ${name} field`)
  return value
}

/** An IETF list field as [name, { params }] pairs, read by a real structured-field parser. */
function items(res: supertest.Response, name: string): [string, Record<string, unknown>][] {
  return parseList(field(res, name)).map(([value, params]) => [String(value), Object.fromEntries(params)])
}

/** A draft-6/7 RateLimit-Policy: [limit, { w }] items. */
function policies(res: supertest.Response): [unknown, Record<string, unknown>][] {
  return parseList(field(res, 'ratelimit-policy')).map(([value, params]) => [value, Object.fromEntries(params)])
}

function rateLimitFields(res: supertest.Response): string[] {
  return Object.keys(res.headers).filter((name) => name.includes('ratelimit'))
}

// Monday 2 June 2025, 00:00 in Berlin (UTC+2): a 24-hour day.
const BERLIN_MIDNIGHT = Date.parse('2025-06-01T22:00:00Z')
const NEXT_BERLIN_MIDNIGHT = Date.parse('2025-06-02T22:00:00Z')
const QUOTA_RULES = [
  { name: 'burst', limit: 100, window: '1m', algorithm: 'fixed-window' },
  { name: 'daily', limit: 500_000, period: 'day', timeZone: 'Europe/Berlin' },
] as const

/** One request at 10:00:30 Berlin to burst (100 a minute) + daily (500,000) in the given header mode. */
async function quotaRequest(start: (spec: AppSpec) => Promise<RunningApp>, headers: HeaderMode) {
  const { clock, store } = clocked(BERLIN_MIDNIGHT + 10 * HOUR_MS + 30_000)
  const app = await start({ limit: { rules: QUOTA_RULES, store, headers, clock: clock.read } })
  return get(app).expect(200)
}

const cases: Case[] = [
  {
    name: 'the worked quota: 500,000 a day at 10 a second runs out at 13:53:20 Berlin, Retry-After to midnight',
    async run(start) {
      const rules = [{ name: 'daily', limit: 500_000, period: 'day', timeZone: 'Europe/Berlin' }] as const
      const { clock, store } = clocked(BERLIN_MIDNIGHT)
      const app = await start({ limit: { rules, store, clock: clock.read } })
      // The same counter, driven directly for the requests between the ones sent over HTTP (500,000 HTTP requests
      // would take minutes): same store, prefix and rule, key = the client's address.
      const direct = createLimiter({ rules, store, logger: QUIET })
      const remaining: number[] = []
      for (let i = 0; i <= 500_000; i++) {
        clock.now = BERLIN_MIDNIGHT + i * 100
        // Every hour, and the last ten and the one after them, over HTTP.
        if ((i + 1) % 36_000 !== 0 && i < 499_990) {
          await direct.consume('127.0.0.1')
          continue
        }
        const res = await get(app)
        if (i < 500_000) {
          expect(res.status).toBe(200)
          remaining.push(items(res, 'ratelimit')[0]?.[1]['r'] as number)
          continue
        }
        // The 500,001st request, at 50,000 s (13 h 53 min 20 s): the quota has run out.
        expect(new Date(clock.now).toISOString()).toBe('2025-06-02T11:53:20.000Z')
        expect(res.status).toBe(429)
        expect(field(res, 'retry-after')).toBe('36400') // to midnight in Berlin: 10 h 6 min 40 s
        expect(res.body).toEqual({ error: 'rate limit exceeded', retryAfter: 36_400 })
        expect(items(res, 'ratelimit-policy')).toEqual([['daily', { q: 500_000, w: 86_400 }]])
        expect(items(res, 'ratelimit')).toEqual([['daily', { r: 0, t: 36_400 }]])
        expect(field(res, 'cache-control')).toBe('no-store')
      }
      expect(remaining.slice(0, 13)).toEqual(Array.from({ length: 13 }, (_, h) => 500_000 - 36_000 * (h + 1)))
      expect(remaining.slice(13)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
      clock.now = NEXT_BERLIN_MIDNIGHT
      const fresh = await get(app).expect(200)
      expect(items(fresh, 'ratelimit')).toEqual([['daily', { r: 499_999, t: 86_400 }]])
    },
  },
  {
    name: "'ietf' with a rate rule and a quota: both policies, the quota's t to midnight in its zone",
    async run(start) {
      const res = await quotaRequest(start, 'ietf')
      expect(field(res, 'ratelimit-policy')).toBe('"burst";q=100;w=60, "daily";q=500000;w=86400')
      expect(items(res, 'ratelimit')).toEqual([
        ['burst', { r: 99, t: 30 }],
        ['daily', { r: 499_999, t: 14 * 3600 - 30 }],
      ])
    },
  },
  {
    name: "'draft-7' with several rules: the binding rule in RateLimit, every rule in RateLimit-Policy",
    async run(start) {
      const res = await quotaRequest(start, 'draft-7')
      const dictionary = parseDictionary(field(res, 'ratelimit'))
      expect([...dictionary].map(([name, [value]]) => [name, value])).toEqual([
        ['limit', 100],
        ['remaining', 99],
        ['reset', 30],
      ])
      expect(policies(res)).toEqual([
        [100, { w: 60 }],
        [500_000, { w: 86_400 }],
      ])
    },
  },
  {
    name: "'draft-6' and 'legacy' with several rules: the binding rule, and every policy where the format has room",
    async run(start) {
      const draft6 = await quotaRequest(start, 'draft-6')
      expect([draft6.get('ratelimit-limit'), draft6.get('ratelimit-remaining'), draft6.get('ratelimit-reset')]).toEqual(
        ['100', '99', '30'],
      )
      expect(policies(draft6)).toEqual([
        [100, { w: 60 }],
        [500_000, { w: 86_400 }],
      ])
      const legacy = await quotaRequest(start, 'legacy')
      expect(rateLimitFields(legacy).sort()).toEqual([
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
      ])
      expect(legacy.get('x-ratelimit-limit')).toBe('100')
      expect(legacy.get('x-ratelimit-reset')).toBe(String((BERLIN_MIDNIGHT + 10 * HOUR_MS + 60_000) / 1000))
    },
  },
  {
    name: 'draft-6/7 list one policy per distinct limit (two items with one limit are invalid there); ietf names both',
    async run(start) {
      const { store } = clocked(BERLIN_MIDNIGHT)
      const rules = [
        { name: 'minute', limit: 100, window: '1m' },
        { name: 'hour', limit: 100, window: '1h' },
      ] as const
      const draft7 = await start({ limit: { rules, store, headers: 'draft-7' } })
      expect(policies(await get(draft7).expect(200))).toHaveLength(1)
      const ietf = await start({ limit: { rules, store: new MemoryStore(), headers: 'ietf' } })
      expect(items(await get(ietf).expect(200), 'ratelimit-policy').map(([name]) => name)).toEqual(['minute', 'hour'])
    },
  },
  {
    name: 'plans: free (10 a minute) and pro (1000 a minute) on one route; an upgrade mid-window keeps the usage',
    async run(start) {
      const { store } = clocked(BERLIN_MIDNIGHT + 10_000)
      const app = await start({
        limit: {
          algorithm: 'fixed-window',
          window: '1m',
          store,
          key: (req) => String(req.headers['x-user']),
          // Asynchronous, as a plan looked up in a database would be.
          limit: async (req) => (req.headers['x-plan'] === 'pro' ? 1000 : 10),
        },
      })
      const as = (user: string, plan: string) => get(app).set('x-user', user).set('x-plan', plan)
      for (let i = 0; i < 8; i++) await as('alice', 'free').expect(200)
      const free = await as('alice', 'free').expect(200)
      expect(items(free, 'ratelimit-policy')).toEqual([['default', { q: 10, w: 60 }]])
      expect(items(free, 'ratelimit')[0]?.[1]['r']).toBe(1)
      // Alice upgrades: her 9 requests still count, against the pro limit.
      const pro = await as('alice', 'pro').expect(200)
      expect(items(pro, 'ratelimit-policy')).toEqual([['default', { q: 1000, w: 60 }]])
      expect(items(pro, 'ratelimit')[0]?.[1]['r']).toBe(990)
      // Bob stays on free: 10, then 429.
      for (let i = 0; i < 10; i++) await as('bob', 'free').expect(200)
      await as('bob', 'free').expect(429)
      await as('carol', 'pro').expect(200)
    },
  },
  {
    name: 'block: 5 failed logins, then 15 minutes refused with a decreasing Retry-After, then admitted',
    async run(start) {
      const { clock, store } = clocked(BERLIN_MIDNIGHT)
      const login = { name: 'login', limit: 5, window: '15m', block: '15m', store, clock: clock.read } as const
      const app = await start({
        routes: [{ method: 'POST', path: '/login', limit: login, handle: { action: 'login' } }],
      })
      for (let i = 0; i < 5; i++) await post(app, '/login').set('x-password', 'wrong').expect(401)
      // The sixth attempt, two minutes later, is refused even with the right password: the key is locked out.
      clock.now = BERLIN_MIDNIGHT + 2 * 60_000
      const locked = await post(app, '/login').set('x-password', 'right').expect(429)
      expect(field(locked, 'retry-after')).toBe('900')
      const waits: string[] = []
      for (const minutes of [3, 7, 12, 16]) {
        clock.now = BERLIN_MIDNIGHT + minutes * 60_000
        const res = await post(app, '/login').set('x-password', 'right').expect(429)
        waits.push(field(res, 'retry-after'))
        expect(items(res, 'ratelimit')[0]?.[1]).toEqual({ r: 0, t: Number(field(res, 'retry-after')) })
      }
      expect(waits).toEqual(['840', '600', '300', '60'])
      clock.now = BERLIN_MIDNIGHT + 17 * 60_000
      await post(app, '/login').set('x-password', 'right').expect(200)
    },
  },
  {
    name: 'the handle: a successful login resets the login limit (reset(keyOf(req)))',
    async run(start) {
      const { store } = clocked(BERLIN_MIDNIGHT)
      const login = { name: 'login', limit: 3, window: '15m', block: '15m', store } as const
      const app = await start({
        routes: [{ method: 'POST', path: '/login', limit: login, handle: { action: 'login' } }],
      })
      for (let round = 0; round < 3; round++) {
        // Two typos, then the right password: the reset keeps a careful user from ever being locked out.
        await post(app, '/login').set('x-password', 'typo').expect(401)
        await post(app, '/login').set('x-password', 'typo').expect(401)
        await post(app, '/login').set('x-password', 'right').expect(200)
      }
      for (let i = 0; i < 3; i++) await post(app, '/login').set('x-password', 'typo').expect(401)
      await post(app, '/login').set('x-password', 'right').expect(429)
    },
  },
  {
    name: 'the handle: peek shows the quota left without charging it; keyOf and peek by key agree',
    async run(start) {
      const { store } = clocked(BERLIN_MIDNIGHT)
      const app = await start({
        routes: [
          { method: 'GET', path: '/api', limit: { rules: QUOTA_RULES, store } },
          { method: 'GET', path: '/quota', handle: { action: 'peek', of: '/api' } },
          { method: 'GET', path: '/keys', handle: { action: 'keyOf', of: '/api' } },
          { method: 'GET', path: '/quota-of', handle: { action: 'peek-key', of: '/api' } },
        ],
      })
      for (let i = 0; i < 3; i++) await get(app, '/api').expect(200)
      for (let i = 0; i < 3; i++) {
        const quota = await get(app, '/quota').expect(200)
        expect(quota.body.peek.rules.map((r: Decision) => [r.rule, r.remaining])).toEqual([
          ['burst', 97],
          ['daily', 499_997],
        ])
      }
      expect((await get(app, '/keys').expect(200)).body).toEqual({ keys: ['127.0.0.1', '127.0.0.1'] })
      const byKey = await get(app, '/quota-of').set('x-key', '127.0.0.1').expect(200)
      expect(byKey.body.peek.remaining).toBe(97)
      const next = await get(app, '/api').expect(200)
      expect(items(next, 'ratelimit').map(([, params]) => params['r'])).toEqual([96, 499_996])
    },
  },
  {
    name: 'denyList: a denied /24 gets 403 no-store {"error":"forbidden"}, no rate-limit headers, the store untouched',
    async run(start) {
      const store = new RecordingStore(clocked(BERLIN_MIDNIGHT + 10_000).store)
      const app = await start({
        trustProxy: true,
        limit: { limit: 100, window: '1m', store, denyList: ['203.0.113.0/24', '2001:db8:bad::/48'] },
      })
      for (const address of ['203.0.113.1', '203.0.113.254', '::ffff:203.0.113.9', '2001:db8:bad:1::7']) {
        const res = await get(app).set('x-forwarded-for', address).expect(403)
        expect(res.body).toEqual({ error: 'forbidden' })
        expect(field(res, 'cache-control')).toBe('no-store')
        expect(rateLimitFields(res)).toEqual([])
        expect(res.get('retry-after')).toBeUndefined()
      }
      expect(store.keys).toEqual([])
      await get(app).set('x-forwarded-for', '203.0.114.1').expect(200)
      await get(app).set('x-forwarded-for', '2001:db8:bae::1').expect(200)
      expect(store.keys).toEqual(['203.0.114.1', '2001:db8:bae::/64'])
    },
  },
  {
    name: 'allowList: an allowed address (IPv4 or an IPv6 CIDR) is never counted and gets no headers',
    async run(start) {
      const store = new RecordingStore(clocked(BERLIN_MIDNIGHT + 10_000).store)
      const app = await start({
        trustProxy: true,
        limit: { limit: 2, window: '1m', store, allowList: ['198.51.100.7', '2001:db8:ab::/48'] },
      })
      for (let i = 0; i < 5; i++) {
        for (const address of ['198.51.100.7', '2001:db8:ab:cd::1', '[2001:db8:ab::9]:443']) {
          const res = await get(app).set('x-forwarded-for', address).expect(200)
          expect(rateLimitFields(res)).toEqual([])
          expect(decisionOf(res)).toBeNull()
        }
      }
      expect(store.keys).toEqual([])
      await get(app).set('x-forwarded-for', '198.51.100.8').expect(200)
      await get(app).set('x-forwarded-for', '198.51.100.8').expect(200)
      await get(app).set('x-forwarded-for', '198.51.100.8').expect(429)
    },
  },
  {
    name: 'lists as functions of the request (async), and deny wins over allow',
    async run(start) {
      const app = await start({
        limit: {
          limit: 1,
          window: '1m',
          store: clocked(BERLIN_MIDNIGHT + 10_000).store,
          denyList: async (req) => req.headers['x-api-key'] === 'revoked',
          allowList: (req) => req.headers['x-api-key'] === 'internal' || req.headers['x-api-key'] === 'revoked',
        },
      })
      for (let i = 0; i < 3; i++) await get(app).set('x-api-key', 'internal').expect(200)
      await get(app).set('x-api-key', 'revoked').expect(403)
      await get(app).set('x-api-key', 'other').expect(200)
      await get(app).set('x-api-key', 'other').expect(429)
    },
  },
  {
    name: 'a bad CIDR throws InvalidOptionError naming the entry, when the app is built',
    async run(start) {
      const error = await start({
        limit: { limit: 1, window: '1m', allowList: ['10.0.0.0/8', '2001:db8::/32', '10.0.0.1/8'] },
      }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      )
      expect(error).toBeInstanceOf(InvalidOptionError)
      expect((error as InvalidOptionError).option).toBe('allowList[2]')
      expect((error as Error).message).toMatch(/bits set past its \/8 prefix.*10\.0\.0\.0\/8/)
      const v6 = await start({ limit: { limit: 1, window: '1m', denyList: ['2001:db8::/129'] } }).catch(
        (e: unknown) => e,
      )
      expect((v6 as InvalidOptionError).option).toBe('denyList[0]')
    },
  },
]

describe.each(frameworks.map((framework): [string, Framework] => [framework.name, framework]))('%s', (_, framework) => {
  const running: RunningApp[] = []
  const start = async (spec: AppSpec) => {
    const app = await framework.start(spec)
    running.push(app)
    return app
  }
  afterEach(async () => {
    const apps = running.splice(0)
    await Promise.all(apps.map((app) => app.close()))
    expect(apps.flatMap((app) => app.failures)).toEqual([])
  })
  it.each(cases.map((c): [string, Case] => [c.name, c]))('%s', (_name, c) => c.run(start), 60_000)
})
