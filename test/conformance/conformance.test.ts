// One table of cases, run through real HTTP against every framework: the adapters must be indistinguishable.
import { request as httpRequest } from 'node:http'
import { type HeaderMode, MemoryStore, StoreKeyError, StoreUnavailableError } from '@sluice/core'
import { type FailurePolicy, RedisStore } from '@sluice/redis'
import Redis from 'ioredis'
import { type Item, parseDictionary, parseItem, parseList } from 'structured-headers'
import supertest from 'supertest'
import { freePort } from '../../scripts/redis-server'
import {
  type AppSpec,
  FailingStore,
  type Framework,
  frameworks,
  type NeutralRequest,
  RecordingStore,
  type RunningApp,
} from './apps'

/** A clock tests move by hand; 2026-01-01T00:00:10Z, 10 s into a minute window. */
function manualClock(start = 1_767_225_610_000) {
  const clock = { now: start, read: () => clock.now }
  return clock
}

/** A MemoryStore on a manual clock. */
function clockedStore() {
  const clock = manualClock()
  return { clock, store: new MemoryStore({ clock: clock.read }) }
}

interface Case {
  readonly name: string
  run(start: (spec: AppSpec) => Promise<RunningApp>, framework: Framework): Promise<void>
}

const get = (app: RunningApp, path = '/') => supertest(app.server).get(path)

/** A header field that must be there, for the structured-field parser. */
function field(res: supertest.Response, name: string): string {
  const value = res.get(name)
  if (value === undefined) throw new Error(`the response has no ${name} field`)
  return value
}

/** The decision the handler saw on the request, as it echoes it. */
const decisionOf = (res: supertest.Response) => res.body.rateLimit as { remaining: number; rule: string } | null

/** Every rate-limit field of a response, by lower-case name: a mode must write exactly its own. */
function rateLimitFields(res: supertest.Response): Record<string, string> {
  return Object.fromEntries(Object.entries(res.headers).filter(([name]) => name.includes('ratelimit')))
}

/** The fields of each mode after one request (limit 100 a minute, fixed window, 10 s into the minute). */
const HEADER_MODES: readonly [HeaderMode, Record<string, string>][] = [
  ['ietf', { 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=99;t=50' }],
  ['draft-7', { 'ratelimit-policy': '100;w=60', ratelimit: 'limit=100, remaining=99, reset=50' }],
  [
    'draft-6',
    { 'ratelimit-policy': '100;w=60', 'ratelimit-limit': '100', 'ratelimit-remaining': '99', 'ratelimit-reset': '50' },
  ],
  // GitHub's convention: the reset as a Unix time in seconds (2026-01-01T00:01:00Z).
  ['legacy', { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '99', 'x-ratelimit-reset': '1767225660' }],
]

/** One request to a fresh app limited 100 a minute in a fixed window, on a clock 10 s into the minute. */
async function oneRequest(start: (spec: AppSpec) => Promise<RunningApp>, headers?: HeaderMode) {
  const { clock, store } = clockedStore()
  const mode = headers === undefined ? {} : { headers }
  const app = await start({
    limit: { algorithm: 'fixed-window', limit: 100, window: '1m', store, clock: clock.read, ...mode },
  })
  return get(app).expect(200)
}

const cases: Case[] = [
  ...HEADER_MODES.map(
    ([mode, expected]): Case => ({
      name: `'${mode}' headers, exactly`,
      async run(start) {
        expect(rateLimitFields(await oneRequest(start, mode))).toEqual(expected)
      },
    }),
  ),
  {
    name: "'ietf' is the default, its fields parse as structured fields, and the decision is on the request",
    async run(start) {
      const res = await oneRequest(start)
      expect(rateLimitFields(res)).toEqual(HEADER_MODES[0]?.[1])
      expect(parseList(field(res, 'ratelimit-policy'))).toEqual([
        [
          'default',
          new Map([
            ['q', 100],
            ['w', 60],
          ]),
        ],
      ])
      expect(parseList(field(res, 'ratelimit'))).toEqual([
        [
          'default',
          new Map([
            ['r', 99],
            ['t', 50],
          ]),
        ],
      ])
      expect(decisionOf(res)).toMatchObject({ allowed: true, remaining: 99, limit: 100, rule: 'default' })
      expect(res.get('retry-after')).toBeUndefined()
    },
  },
  {
    name: "'draft-7' fields parse as a structured dictionary and item",
    async run(start) {
      const res = await oneRequest(start, 'draft-7')
      const fields = parseDictionary(field(res, 'ratelimit'))
      expect([...fields].map(([name, [value]]) => [name, value])).toEqual([
        ['limit', 100],
        ['remaining', 99],
        ['reset', 50],
      ])
      expect(parseItem(field(res, 'ratelimit-policy'))).toEqual([100, new Map([['w', 60]])])
    },
  },
  {
    name: 'several header modes at once, and none with headers: false',
    async run(start) {
      const clock = manualClock()
      const both = await start({
        limit: {
          algorithm: 'fixed-window',
          limit: 10,
          window: '1m',
          headers: ['draft-6', 'legacy'],
          clock: clock.read,
          store: new MemoryStore({ clock: clock.read }),
        },
      })
      const res = await get(both).expect(200)
      expect(res.get('ratelimit-remaining')).toBe('9')
      expect(res.get('x-ratelimit-remaining')).toBe('9')
      expect(res.get('x-ratelimit-reset')).toBe(String(1_767_225_660))
      const none = await start({
        limit: {
          algorithm: 'fixed-window',
          limit: 1,
          window: '1m',
          headers: false,
          store: new MemoryStore({ clock: clock.read }),
        },
      })
      const quiet = await get(none).expect(200)
      expect(Object.keys(quiet.headers).filter((name) => name.includes('ratelimit'))).toEqual([])
      const rejected = await get(none).expect(429)
      expect(rejected.get('retry-after')).toBe('50')
      expect(Object.keys(rejected.headers).filter((name) => name.includes('ratelimit'))).toEqual([])
    },
  },
  {
    name: 'a rejection: 429, Retry-After = ceil(retryAfterMs / 1000) and never earlier than t, no-store, JSON body',
    async run(start) {
      const clock = manualClock()
      // A bucket of 3 refilling 3 per 10 s: after three requests the next token is 3334 ms away.
      const store = new MemoryStore({ clock: clock.read })
      const app = await start({ limit: { algorithm: 'token-bucket', limit: 3, window: '10s', store } })
      for (let i = 0; i < 3; i++) await get(app).expect(200)
      const res = await get(app).expect(429)
      expect(res.get('retry-after')).toBe('4')
      expect(res.get('cache-control')).toBe('no-store')
      expect(res.get('content-type')).toMatch(/^application\/json/)
      expect(res.body).toEqual({ error: 'rate limit exceeded', retryAfter: 4 })
      const [[, params]] = parseList(field(res, 'ratelimit')) as [Item]
      expect(params.get('r')).toBe(0)
      expect(Number(res.get('retry-after'))).toBeGreaterThanOrEqual(params.get('t') as number)
      clock.now += 3333
      await get(app).expect(429)
      clock.now += 1
      await get(app).expect(200)
    },
  },
  {
    name: 'Retry-After is at least 1 second when the wait is shorter',
    async run(start) {
      const { store } = clockedStore()
      const app = await start({ limit: { algorithm: 'token-bucket', limit: 1, rate: 100, store } })
      await get(app).expect(200)
      const res = await get(app).expect(429)
      expect(res.get('retry-after')).toBe('1')
      expect(res.body.retryAfter).toBe(1)
    },
  },
  {
    name: 'weighted cost: with a bucket of 30, an export costing 25 is rejected while reads costing 1 pass',
    async run(start) {
      const { store } = clockedStore()
      const app = await start({
        limit: {
          algorithm: 'token-bucket',
          limit: 30,
          window: '1m',
          store,
          // Asynchronous, as a cost looked up elsewhere would be.
          cost: async (req) => (req.headers['x-export'] === 'yes' ? 25 : 1),
        },
      })
      for (let i = 0; i < 6; i++) await get(app).expect(200)
      // 25 tokens are one more than the 24 left; at 30 per minute that one comes back in 2 s.
      const exported = await get(app).set('x-export', 'yes').expect(429)
      expect(exported.get('ratelimit')).toBe('"default";r=24;t=2')
      expect(exported.get('retry-after')).toBe('2')
      const read = await get(app).expect(200)
      expect(decisionOf(read)?.remaining).toBe(23)
    },
  },
  {
    name: 'stacked rules: when the tenant rule rejects, the user rule is not charged',
    async run(start) {
      const { store } = clockedStore()
      const app = await start({
        limit: {
          store,
          algorithm: 'fixed-window',
          rules: [
            { name: 'user', limit: 100, window: '1m', key: (req) => `user:${req.headers['x-user']}` },
            { name: 'tenant', limit: 2, window: '1m', key: (req) => `tenant:${req.headers['x-tenant']}` },
          ],
        },
      })
      const as = (user: string, tenant: string) => get(app).set('x-user', user).set('x-tenant', tenant)
      await as('alice', 'acme').expect(200)
      const second = await as('alice', 'acme').expect(200)
      expect(second.get('ratelimit')).toBe('"user";r=98;t=50, "tenant";r=0;t=50')
      expect(second.get('ratelimit-policy')).toBe('"user";q=100;w=60, "tenant";q=2;w=60')
      const rejected = await as('alice', 'acme').expect(429)
      expect(parseList(field(rejected, 'ratelimit')).map(([name, params]) => [name, params.get('r')])).toEqual([
        ['user', 98],
        ['tenant', 0],
      ])
      const elsewhere = await as('alice', 'globex').expect(200)
      expect(elsewhere.get('ratelimit')).toBe('"user";r=97;t=50, "tenant";r=1;t=50')
    },
  },
  {
    name: 'per-route: POST /login at 5 per 15 min and GET /items at 100 per min count separately',
    async run(start) {
      const { clock, store } = clockedStore()
      const app = await start({
        routes: [
          {
            method: 'POST',
            path: '/login',
            limit: { name: 'login', limit: 5, window: '15m', store, algorithm: 'fixed-window' },
          },
          {
            method: 'GET',
            path: '/items',
            limit: { name: 'items', limit: 100, window: '1m', store, algorithm: 'fixed-window' },
          },
        ],
      })
      for (let i = 0; i < 5; i++) await supertest(app.server).post('/login').expect(200)
      const locked = await supertest(app.server).post('/login').expect(429)
      expect(locked.get('ratelimit-policy')).toBe('"login";q=5;w=900')
      const items = await get(app, '/items').expect(200)
      expect(items.get('ratelimit')).toBe('"items";r=99;t=50')
      for (let i = 0; i < 3; i++) await get(app, '/items').expect(200)
      clock.now += 15 * 60_000
      const login = await supertest(app.server).post('/login').expect(200)
      expect(decisionOf(login)?.remaining).toBe(4)
    },
  },
  {
    name: 'a spoofed X-Forwarded-For with trust proxy off counts under the connection address, with one warning',
    async run(start) {
      const store = new RecordingStore(clockedStore().store)
      const app = await start({ limit: { limit: 3, window: '1m', store } })
      for (const [forwarded, remaining] of [
        ['203.0.113.1', 2],
        ['203.0.113.2', 1],
        ['198.51.100.9, 203.0.113.3', 0],
      ] as const) {
        const res = await get(app).set('x-forwarded-for', forwarded).expect(200)
        expect(decisionOf(res)?.remaining).toBe(remaining)
      }
      await get(app).set('x-forwarded-for', '203.0.113.4').expect(429)
      expect(new Set(store.keys)).toEqual(new Set(['127.0.0.1']))
      expect(app.warnings).toHaveLength(1)
      expect(app.warnings[0]).toMatch(/X-Forwarded-For/)
    },
  },
  {
    name: 'behind a trusted proxy, one key per forwarded client',
    async run(start) {
      const store = new RecordingStore(clockedStore().store)
      const app = await start({ trustProxy: true, limit: { limit: 3, window: '1m', store } })
      for (const client of ['203.0.113.1', '203.0.113.2', '203.0.113.1']) {
        await get(app).set('x-forwarded-for', client).expect(200)
      }
      const res = await get(app).set('x-forwarded-for', '203.0.113.2').expect(200)
      expect(decisionOf(res)?.remaining).toBe(1)
      expect(store.keys).toEqual(['203.0.113.1', '203.0.113.2', '203.0.113.1', '203.0.113.2'])
      expect(app.warnings).toEqual([])
    },
  },
  {
    name: 'a forwarded address with a port is one client, whatever its port (issue 9: 6 of 6 admitted at limit 3)',
    async run(start) {
      const store = new RecordingStore(clockedStore().store)
      const app = await start({ trustProxy: true, limit: { limit: 3, window: '1m', store } })
      // What some load balancers send: the client's address with its source port, IPv6 in brackets.
      const spellings = [
        '203.0.113.9:5678',
        '203.0.113.9:5679',
        '203.0.113.9',
        '[2001:db8::1]:443',
        '[2001:db8::1]:444',
        '[2001:db8::1]',
      ]
      const statuses: number[] = []
      for (const forwarded of spellings.slice(0, 3).concat(spellings.slice(0, 3))) {
        statuses.push((await get(app).set('x-forwarded-for', forwarded)).status)
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429])
      for (const forwarded of spellings.slice(3).concat(spellings.slice(3))) {
        statuses.push((await get(app).set('x-forwarded-for', forwarded)).status)
      }
      expect(statuses.slice(6)).toEqual([200, 200, 200, 429, 429, 429])
      expect(new Set(store.keys)).toEqual(new Set(['203.0.113.9', '2001:db8::/64']))
      expect(app.warnings).toEqual([])
    },
  },
  {
    name: 'two IPv6 clients in one /64 share a count; ::ffff:1.2.3.4 counts as 1.2.3.4',
    async run(start) {
      const store = new RecordingStore(clockedStore().store)
      const app = await start({ trustProxy: true, limit: { limit: 10, window: '1m', store } })
      const from = (address: string) => get(app).set('x-forwarded-for', address).expect(200)
      await from('2001:db8:1:2::1')
      const neighbour = await from('2001:db8:1:2:ffff:ffff:ffff:9')
      expect(decisionOf(neighbour)?.remaining).toBe(8)
      const otherNetwork = await from('2001:db8:1:3::1')
      expect(decisionOf(otherNetwork)?.remaining).toBe(9)
      await from('::ffff:1.2.3.4')
      const plain = await from('1.2.3.4')
      expect(decisionOf(plain)?.remaining).toBe(8)
      expect(store.keys).toEqual(['2001:db8:1:2::/64', '2001:db8:1:2::/64', '2001:db8:1:3::/64', '1.2.3.4', '1.2.3.4'])
    },
  },
  {
    name: 'a custom key falling back to ipKey(req) keeps the /64 grouping that a fallback to req.ip loses, IPv4 as it is',
    async run(start, framework) {
      const store = new RecordingStore(clockedStore().store)
      // The docs' keys example: an API key when there is one, else the client address.
      const key = (req: NeutralRequest) => {
        const apiKey = req.headers['x-api-key']
        return typeof apiKey === 'string' ? `key:${apiKey}` : framework.ipKey(req)
      }
      const app = await start({ trustProxy: true, limit: { limit: 10, window: '1m', key, store } })
      const from = async (address: string) => {
        const res = await get(app).set('x-forwarded-for', address).expect(200)
        return decisionOf(res)?.remaining
      }
      expect(await from('2001:db8:1:2::1')).toBe(9)
      expect(await from('2001:db8:1:2:ffff:ffff:ffff:9')).toBe(8)
      expect(await from('[2001:DB8:1:2::3]:443')).toBe(7)
      expect(await from('2001:db8:1:3::1')).toBe(9)
      expect(await from('203.0.113.7')).toBe(9)
      expect(await from('::ffff:203.0.113.7')).toBe(8)
      expect(decisionOf(await get(app).set('x-api-key', 'k1').expect(200))?.remaining).toBe(9)
      expect(store.keys).toEqual([
        '2001:db8:1:2::/64',
        '2001:db8:1:2::/64',
        '2001:db8:1:2::/64',
        '2001:db8:1:3::/64',
        '203.0.113.7',
        '203.0.113.7',
        'key:k1',
      ])
    },
  },
  {
    name: 'ipKey(req) keys a malformed address as it is (trimmed, at most 64 characters), never failing the request',
    async run(start, framework) {
      const store = new RecordingStore(clockedStore().store)
      const app = await start({ trustProxy: true, limit: { limit: 10, window: '1m', key: framework.ipKey, store } })
      const long = 'x'.repeat(100)
      await get(app).set('x-forwarded-for', 'not-an-address').expect(200)
      await get(app).set('x-forwarded-for', long).expect(200)
      await get(app).set('x-forwarded-for', '2001:db8::1::2').expect(200)
      expect(store.keys).toEqual(['not-an-address', 'x'.repeat(64), '2001:db8::1::2'])
    },
  },
  {
    name: 'ipKey(req, { ipv6Subnet }) groups per the given prefix (56, or false for whole addresses); 0 throws naming it',
    async run(start, framework) {
      const store = new RecordingStore(clockedStore().store)
      const errors: unknown[] = []
      const key = (req: NeutralRequest) => {
        try {
          framework.ipKey(req, { ipv6Subnet: 0 })
        } catch (error) {
          errors.push(error)
        }
        return `${framework.ipKey(req, { ipv6Subnet: 56 })} ${framework.ipKey(req, { ipv6Subnet: false })}`
      }
      const app = await start({ trustProxy: true, limit: { limit: 10, window: '1m', key, store } })
      await get(app).set('x-forwarded-for', '2001:db8:1:2ab::9').expect(200)
      await get(app).set('x-forwarded-for', '203.0.113.7').expect(200)
      expect(store.keys).toEqual(['2001:db8:1:200::/56 2001:db8:1:2ab::9/128', '203.0.113.7 203.0.113.7'])
      expect(errors).toEqual([
        expect.objectContaining({ name: 'InvalidOptionError', option: 'ipv6Subnet' }),
        expect.objectContaining({ name: 'InvalidOptionError', option: 'ipv6Subnet' }),
      ])
    },
  },
  {
    name: 'skip: skipped requests are neither counted nor given headers',
    async run(start) {
      const app = await start({
        limit: {
          limit: 2,
          window: '1m',
          store: clockedStore().store,
          skip: (req) => req.headers['x-health-check'] === '1',
        },
      })
      for (let i = 0; i < 5; i++) {
        const res = await get(app).set('x-health-check', '1').expect(200)
        expect(res.get('ratelimit')).toBeUndefined()
        expect(decisionOf(res)).toBeNull()
      }
      const counted = await get(app).expect(200)
      expect(decisionOf(counted)?.remaining).toBe(1)
    },
  },
  {
    name: 'refund: failed responses give their cost back',
    async run(start) {
      const app = await start({
        limit: { limit: 2, window: '1m', store: clockedStore().store, refund: (_req, res) => res.statusCode >= 400 },
        routes: [
          { method: 'GET', path: '/ok' },
          { method: 'GET', path: '/broken', status: 500 },
        ],
      })
      for (let i = 0; i < 5; i++) await get(app, '/broken').expect(500)
      const first = await get(app, '/ok').expect(200)
      expect(decisionOf(first)?.remaining).toBe(1)
      await get(app, '/ok').expect(200)
      await get(app, '/ok').expect(429)
    },
  },
  {
    name: "a custom onRejected writes the response, after the limiter's headers are set",
    async run(start) {
      const { store } = clockedStore()
      const app = await start({
        customRejection: true,
        limit: { limit: 1, window: '1m', algorithm: 'fixed-window', store },
      })
      await get(app).expect(200)
      const res = await get(app).expect(429)
      expect(res.text).toBe('slow down, 50000 ms')
      expect(res.get('content-type')).toMatch(/^text\/plain/)
      expect(res.get('retry-after')).toBe('50')
      expect(res.get('cache-control')).toBe('no-store')
      expect(res.get('ratelimit')).toBe('"default";r=0;t=50')
    },
  },
  {
    name: "a failing store: 'open' admits uncounted, 'closed' answers 503, logging once per outage",
    async run(start) {
      const broken = () => new FailingStore(() => new Error('connect ECONNREFUSED 127.0.0.1:1'))
      const open = await start({ limit: { limit: 1, window: '1m', store: broken(), onError: 'open' } })
      for (let i = 0; i < 3; i++) {
        const res = await get(open).expect(200)
        expect(decisionOf(res)).toBeNull()
        expect(res.get('ratelimit')).toBeUndefined()
      }
      expect(open.errors).toHaveLength(1)
      const closed = await start({ limit: { limit: 1, window: '1m', store: broken(), onError: 'closed' } })
      for (let i = 0; i < 3; i++) {
        const res = await get(closed).expect(503)
        expect(res.body).toEqual({ error: 'rate limiter unavailable' })
        expect(res.get('cache-control')).toBe('no-store')
        expect(res.get('retry-after')).toBeUndefined()
      }
      expect(closed.errors).toHaveLength(1)
    },
  },
  {
    name: "a RedisStore whose Redis is down: onError 'open' admits, 'closed' answers 503",
    async run(start) {
      // Nothing listens on this port, so every call is refused.
      const port = await freePort()
      const clients: Redis[] = []
      const stores: RedisStore[] = []
      const redisStore = (onError: FailurePolicy) => {
        const client = new Redis({
          host: '127.0.0.1',
          port,
          // Refused at once and for good: no reconnection, no queue to wait in.
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        })
        client.on('error', () => {})
        clients.push(client)
        const store = new RedisStore({ client, onError, logger: { warn: () => {}, error: () => {}, info: () => {} } })
        stores.push(store)
        return store
      }
      try {
        const open = await start({ limit: { limit: 1, window: '1m', store: redisStore('open') } })
        for (let i = 0; i < 3; i++) await get(open).expect(200)
        const closed = await start({ limit: { limit: 1, window: '1m', store: redisStore('closed') } })
        const res = await get(closed).expect(503)
        expect(res.body).toEqual({ error: 'rate limiter unavailable' })
        expect(res.get('cache-control')).toBe('no-store')
      } finally {
        for (const store of stores) store.close()
        // Refused with no retry, each client ends by itself; disconnect() on an ended ioredis client would
        // leave a handle open.
        await Promise.all(
          clients.map((client) =>
            client.status === 'end' ? undefined : new Promise((resolve) => client.once('end', resolve)),
          ),
        )
      }
    },
  },
  {
    name: "a store error about one key (StoreKeyError) is answered by onError, and is not the adapter's to log",
    async run(start) {
      // The store logged it, once per key; the key's requests fail while other keys are decided as usual.
      const poisoned = () => new FailingStore(() => new StoreKeyError('key "x" holds a list', 'x', 'default'))
      const open = await start({ limit: { limit: 1, window: '1m', store: poisoned(), onError: 'open' } })
      for (let i = 0; i < 2; i++) expect(decisionOf(await get(open).expect(200))).toBeNull()
      const closed = await start({ limit: { limit: 1, window: '1m', store: poisoned(), onError: 'closed' } })
      for (let i = 0; i < 2; i++)
        expect((await get(closed).expect(503)).body).toEqual({ error: 'rate limiter unavailable' })
      expect([open.errors, closed.errors]).toEqual([[], []])
    },
  },
  {
    name: 'a store that fails closed (StoreUnavailableError) answers 503 whatever onError says',
    async run(start) {
      const store = new FailingStore(() => new StoreUnavailableError('redis is down'))
      const app = await start({ limit: { limit: 1, window: '1m', store, onError: 'open' } })
      const res = await get(app).expect(503)
      expect(res.body).toEqual({ error: 'rate limiter unavailable' })
    },
  },
  {
    name: 'a cost above capacity: 413, no Retry-After, nothing consumed',
    async run(start) {
      const { store } = clockedStore()
      const app = await start({
        limit: {
          algorithm: 'token-bucket',
          limit: 30,
          window: '1m',
          store,
          cost: (req) => Number(req.headers['x-cost'] ?? 1),
        },
      })
      const res = await get(app).set('x-cost', '31').expect(413)
      expect(res.get('retry-after')).toBeUndefined()
      expect(res.get('cache-control')).toBe('no-store')
      expect(res.body).toEqual({ error: 'request cost exceeds the rate limit', cost: 31, limit: 30 })
      expect(res.get('ratelimit')).toBe('"default";r=30;t=0')
      const next = await get(app).expect(200)
      expect(decisionOf(next)?.remaining).toBe(29)
    },
  },
  {
    name: 'rejects a 50 MB upload before its body is read or parsed',
    async run(start) {
      const { store } = clockedStore()
      const app = await start({
        limit: { algorithm: 'fixed-window', limit: 1, window: '1m', store },
        routes: [{ method: 'POST', path: '/upload' }],
      })
      const upload = (): Promise<{ status: number; retryAfter: string | undefined; sent: number }> =>
        new Promise((resolve, reject) => {
          const size = 50 * 1024 * 1024
          const req = httpRequest(`${app.url}/upload`, {
            method: 'POST',
            headers: { 'content-type': 'application/octet-stream', 'content-length': size },
          })
          let sent = 0
          req.on('response', (res) => {
            res.resume()
            req.destroy()
            resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], sent })
          })
          req.on('error', (error) => {
            if (!req.destroyed) reject(error)
          })
          // Only the first 64 KiB go out; the rest would follow only if the server asked to read on.
          const chunk = Buffer.alloc(64 * 1024)
          sent += chunk.length
          req.write(chunk)
        })
      await supertest(app.server).post('/upload').set('content-type', 'application/octet-stream').send('x')
      const parsedBefore = app.parsed()
      expect(parsedBefore).toBe(1)
      const rejected = await upload()
      expect(rejected.status).toBe(429)
      expect(rejected.retryAfter).toBe('50')
      expect(rejected.sent).toBeLessThan(50 * 1024 * 1024)
      expect(app.parsed()).toBe(parsedBefore)
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
    // Nothing a case does may reach the framework's error handler.
    expect(apps.flatMap((app) => app.failures)).toEqual([])
  })
  it.each(cases.map((c): [string, Case] => [c.name, c]))('%s', (_name, c) => c.run(start, framework))
})

// Two limiters on one request: a global limit and a route's, each a `rateLimit` (on Fastify, a route config with
// `withGlobal: true`: without it a route's own limit replaces the global one). The route's fields used to overwrite the
// global's: a client told 9 left by the route was refused by the global on its 4th request.
const stackedCases: Case[] = [
  {
    name: 'a global and a route limiter: RateLimit lists both, X-RateLimit follows the binding (global) one',
    async run(start) {
      const { store } = clockedStore()
      const headers: HeaderMode[] = ['ietf', 'legacy']
      const app = await start({
        limit: { name: 'global', limit: 3, window: '1m', store, algorithm: 'fixed-window', headers },
        routes: [
          {
            method: 'GET',
            path: '/items',
            limit: { name: 'items', limit: 10, window: '1m', store, algorithm: 'fixed-window', headers },
          },
        ],
      })
      const first = await get(app, '/items').expect(200)
      expect(first.get('ratelimit-policy')).toBe('"global";q=3;w=60, "items";q=10;w=60')
      expect(first.get('ratelimit')).toBe('"global";r=2;t=50, "items";r=9;t=50')
      expect(first.get('x-ratelimit-limit')).toBe('3')
      expect(first.get('x-ratelimit-remaining')).toBe('2')
      await get(app, '/items').expect(200)
      const third = await get(app, '/items').expect(200)
      expect(third.get('x-ratelimit-remaining')).toBe('0')
      expect(parseList(field(third, 'ratelimit')).map(([name, params]) => [name, params.get('r')])).toEqual([
        ['global', 0],
        ['items', 7],
      ])
      await get(app, '/items').expect(429)
    },
  },
  {
    name: 'a route limiter that rejects after the global passed: Retry-After and X-RateLimit are the route’s',
    async run(start) {
      const { store } = clockedStore()
      const headers: HeaderMode[] = ['ietf', 'legacy']
      const app = await start({
        limit: { name: 'global', limit: 100, window: '1m', store, algorithm: 'fixed-window', headers },
        routes: [
          {
            method: 'POST',
            path: '/login',
            limit: { name: 'login', limit: 1, window: '15m', store, algorithm: 'fixed-window', headers },
          },
        ],
      })
      await supertest(app.server).post('/login').expect(200)
      const refused = await supertest(app.server).post('/login').expect(429)
      expect(refused.get('ratelimit')).toBe('"global";r=98;t=50, "login";r=0;t=890')
      expect(refused.get('retry-after')).toBe('890')
      expect(refused.get('x-ratelimit-limit')).toBe('1')
      expect(refused.get('x-ratelimit-remaining')).toBe('0')
    },
  },
  {
    name: 'two limiters both named "default": both items are listed, the second as "default-2"',
    async run(start) {
      const { store } = clockedStore()
      const app = await start({
        limit: { limit: 3, window: '1m', store, algorithm: 'fixed-window', prefix: 'global' },
        routes: [{ method: 'GET', path: '/', limit: { limit: 10, window: '1m', store, algorithm: 'fixed-window' } }],
      })
      const res = await get(app).expect(200)
      expect(res.get('ratelimit-policy')).toBe('"default";q=3;w=60, "default-2";q=10;w=60')
      expect(res.get('ratelimit')).toBe('"default";r=2;t=50, "default-2";r=9;t=50')
    },
  },
  {
    name: 'mixed modes: the outermost limiter spells RateLimit (draft-7 over ietf), as one parseable field',
    async run(start) {
      const { store } = clockedStore()
      const app = await start({
        limit: { name: 'global', limit: 3, window: '1m', store, algorithm: 'fixed-window', headers: 'draft-7' },
        routes: [
          {
            method: 'GET',
            path: '/',
            limit: { name: 'route', limit: 10, window: '1m', store, algorithm: 'fixed-window', headers: 'ietf' },
          },
        ],
      })
      const res = await get(app).expect(200)
      expect(rateLimitFields(res)).toEqual({
        ratelimit: 'limit=3, remaining=2, reset=50',
        'ratelimit-policy': '3;w=60, 10;w=60',
      })
      expect(Object.fromEntries([...parseDictionary(field(res, 'ratelimit'))].map(([k, [v]]) => [k, v]))).toEqual({
        limit: 3,
        remaining: 2,
        reset: 50,
      })
    },
  },
]

describe.each(frameworks.map((framework): [string, Framework] => [framework.name, framework]))(
  '%s stacked',
  (_, framework) => {
    const running: RunningApp[] = []
    const start = async (spec: AppSpec) => {
      const app = await framework.start({ ...spec, withGlobal: true })
      running.push(app)
      return app
    }
    afterEach(async () => {
      const apps = running.splice(0)
      await Promise.all(apps.map((app) => app.close()))
      expect(apps.flatMap((app) => app.failures)).toEqual([])
    })
    it.each(stackedCases.map((c): [string, Case] => [c.name, c]))('%s', (_name, c) => c.run(start, framework))
  },
)
