// Quotas and blocks on Redis as in memory: the calendar's edges (DST days of 23 and 25 hours, months of 28 to 31
// days, the first request of a period), the Redis clock deciding the period even when an instance's clock is days
// off, and lockouts, replayed on both stores at the same instants.
import {
  createLimiter,
  type Decision,
  type LimiterOptions,
  MemoryStore,
  type RuleLimits,
  type Store,
} from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import Redis from 'ioredis'
import { replayStore } from '../../packages/redis/src/redis-store'
import { type RedisServer, startRedis } from '../../scripts/redis-server'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
const ms = (iso: string) => Date.parse(iso)

let server: RedisServer
let client: Redis

beforeAll(async () => {
  server = await startRedis()
  client = new Redis({ host: server.host, port: server.port, lazyConnect: true })
  await client.connect()
})

afterAll(async () => {
  client?.disconnect()
  await server?.stop()
})

let prefixes = 0

/** The same limiter on a MemoryStore and on a RedisStore, both on one clock the test moves. */
function bothStores(options: LimiterOptions, start: number) {
  const time = { now: start }
  const clock = () => time.now
  const prefix = `quota${prefixes++}`
  const stores: [string, Store][] = [
    ['memory', new MemoryStore({ clock })],
    ['redis', replayStore({ client, clock, timeout: 5000 })],
  ]
  const limiters = stores.map(([name, store]) => [name, createLimiter({ ...options, prefix, store })] as const)
  /** Consumes on both stores; they must agree, and the (shared) decision is returned. */
  async function consume(key: string, cost = 1, limits?: RuleLimits): Promise<Decision> {
    const [memory, redis] = await Promise.all(
      limiters.map(([, limiter]) => (limits === undefined ? limiter : limiter.withLimits(limits)).consume(key, cost)),
    )
    expect(redis).toEqual(memory)
    return memory as Decision
  }
  async function reset(key: string) {
    await Promise.all(limiters.map(([, limiter]) => limiter.reset(key)))
  }
  return { time, consume, reset }
}

interface Edge {
  readonly name: string
  readonly period: 'day' | 'month'
  readonly timeZone: string
  /** The period's first instant and the next period's, in UTC. */
  readonly start: string
  readonly end: string
  readonly hours: number
}

const EDGES: readonly Edge[] = [
  {
    name: 'Berlin, 30 March 2025 (spring forward)',
    period: 'day',
    timeZone: 'Europe/Berlin',
    start: '2025-03-29T23:00:00Z',
    end: '2025-03-30T22:00:00Z',
    hours: 23,
  },
  {
    name: 'Berlin, 26 October 2025 (fall back)',
    period: 'day',
    timeZone: 'Europe/Berlin',
    start: '2025-10-25T22:00:00Z',
    end: '2025-10-26T23:00:00Z',
    hours: 25,
  },
  {
    name: 'New York, 9 March 2025 (spring forward)',
    period: 'day',
    timeZone: 'America/New_York',
    start: '2025-03-09T05:00:00Z',
    end: '2025-03-10T04:00:00Z',
    hours: 23,
  },
  {
    name: 'New York, 2 November 2025 (fall back)',
    period: 'day',
    timeZone: 'America/New_York',
    start: '2025-11-02T04:00:00Z',
    end: '2025-11-03T05:00:00Z',
    hours: 25,
  },
  {
    name: 'UTC, February 2025 (28 days)',
    period: 'month',
    timeZone: 'UTC',
    start: '2025-02-01T00:00:00Z',
    end: '2025-03-01T00:00:00Z',
    hours: 28 * 24,
  },
  {
    name: 'Berlin, February 2024 (29 days)',
    period: 'month',
    timeZone: 'Europe/Berlin',
    start: '2024-01-31T23:00:00Z',
    end: '2024-02-29T23:00:00Z',
    hours: 29 * 24,
  },
  {
    name: 'New York, April 2025 (30 days)',
    period: 'month',
    timeZone: 'America/New_York',
    start: '2025-04-01T04:00:00Z',
    end: '2025-05-01T04:00:00Z',
    hours: 30 * 24,
  },
  {
    name: 'UTC, January 2025 (31 days)',
    period: 'month',
    timeZone: 'UTC',
    start: '2025-01-01T00:00:00Z',
    end: '2025-02-01T00:00:00Z',
    hours: 31 * 24,
  },
  {
    name: 'Berlin, March 2025 (31 days, one hour short)',
    period: 'month',
    timeZone: 'Europe/Berlin',
    start: '2025-02-28T23:00:00Z',
    end: '2025-03-31T22:00:00Z',
    hours: 31 * 24 - 1,
  },
  {
    name: 'New York, November 2025 (30 days, one hour long)',
    period: 'month',
    timeZone: 'America/New_York',
    start: '2025-11-01T04:00:00Z',
    end: '2025-12-01T05:00:00Z',
    hours: 30 * 24 + 1,
  },
]

describe.each(EDGES)('$name: memory and Redis alike', ({ period, timeZone, start, end, hours }) => {
  test(`a period of ${hours} hours: the last of the previous one, the first request, running out, and the next`, async () => {
    const startMs = ms(start)
    const endMs = ms(end)
    expect(endMs - startMs).toBe(hours * HOUR_MS)
    const { time, consume } = bothStores({ name: 'quota', limit: 3, period, timeZone }, startMs - 1)
    // The previous period's last millisecond: a full quota there, reset a millisecond later.
    expect(await consume('k', 3)).toMatchObject({ allowed: true, remaining: 0, resetMs: 1 })
    time.now = startMs
    expect(await consume('k')).toMatchObject({ allowed: true, remaining: 2, resetMs: hours * HOUR_MS })
    time.now = startMs + Math.floor((endMs - startMs) / 2)
    expect(await consume('k', 2)).toMatchObject({ allowed: true, remaining: 0 })
    expect(await consume('k')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: endMs - time.now })
    time.now = endMs - 1
    expect(await consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1, resetMs: 1 })
    time.now = endMs
    const next = await consume('k')
    expect(next).toMatchObject({ allowed: true, remaining: 2 })
    // The next period is counted from its own start: a day of 24 hours after a DST day, or the next month.
    expect(next.resetMs).toBeGreaterThanOrEqual(23 * HOUR_MS)
  })
})

test('a request in the repeated hour of a fall-back night counts in the same day (Berlin, 02:30 twice)', async () => {
  const { time, consume } = bothStores({ name: 'quota', limit: 2, period: 'day', timeZone: 'Europe/Berlin' }, 0)
  time.now = ms('2025-10-26T00:30:00Z') // 02:30 CEST
  expect(await consume('k')).toMatchObject({ remaining: 1, resetMs: ms('2025-10-26T23:00:00Z') - time.now })
  time.now = ms('2025-10-26T01:30:00Z') // 02:30 CET, an hour later
  expect(await consume('k')).toMatchObject({ remaining: 0 })
  expect(await consume('k')).toMatchObject({ allowed: false, retryAfterMs: ms('2025-10-26T23:00:00Z') - time.now })
})

test('a quota stacked with a rate rule and a block, on both stores: the lockout of a used-up quota', async () => {
  const options: LimiterOptions = {
    rules: [
      { name: 'burst', limit: 5, window: '1s', algorithm: 'fixed-window' },
      { name: 'daily', limit: 8, period: 'day', timeZone: 'America/New_York', block: '2h' },
    ],
  }
  const midnight = ms('2025-06-02T04:00:00Z')
  const { time, consume, reset } = bothStores(options, midnight + 20 * HOUR_MS) // 20:00 in New York
  expect(await consume('k', 5)).toMatchObject({ allowed: true, rule: 'burst', remaining: 0 })
  expect(await consume('k')).toMatchObject({ allowed: false, rule: 'burst', retryAfterMs: 1000 })
  time.now += 1000
  expect(await consume('k', 3)).toMatchObject({ allowed: true, rule: 'daily', remaining: 0 })
  const refused = await consume('k')
  // The quota's own wait (to midnight, 4 hours) is longer than the block.
  expect(refused).toMatchObject({ allowed: false, rule: 'daily', retryAfterMs: 4 * HOUR_MS - 1000 })
  time.now = midnight + DAY_MS
  expect(await consume('k')).toMatchObject({ allowed: true })
  await reset('k')
  expect((await consume('k')).rules?.[1]).toMatchObject({ remaining: 7 })
})

test('5 failed logins, 15 minutes refused with a decreasing Retry-After, then admitted: on Redis as in memory', async () => {
  const start = 1_750_000_000_000
  const { time, consume, reset } = bothStores({ name: 'login', limit: 5, window: '15m', block: '15m' }, start)
  for (let i = 0; i < 5; i++) expect((await consume('alice')).allowed).toBe(true)
  const waits: number[] = []
  for (const minute of [0, 1, 7, 14]) {
    time.now = start + minute * 60_000
    waits.push((await consume('alice')).retryAfterMs)
  }
  expect(waits).toEqual([15, 14, 8, 1].map((m) => m * 60_000))
  time.now = start + 15 * 60_000
  expect(await consume('alice')).toMatchObject({ allowed: true })
  // A second lockout, lifted by reset (what an app does after a successful login).
  for (let i = 0; i < 6; i++) await consume('bob')
  expect(await consume('bob')).toMatchObject({ allowed: false, retryAfterMs: 15 * 60_000 })
  await reset('bob')
  expect(await consume('bob')).toMatchObject({ allowed: true, remaining: 4 })
})

test('plans on Redis as in memory: an upgrade right after a rejection is admitted, with the usage kept', async () => {
  const { consume } = bothStores({ name: 'api', limit: 10, window: '1m', algorithm: 'fixed-window' }, 1_750_000_020_000)
  expect(await consume('alice', 10)).toMatchObject({ allowed: true, remaining: 0 })
  // Rejected on the free plan: the Redis store remembers it, for the free plan only.
  expect(await consume('alice')).toMatchObject({ allowed: false, limit: 10 })
  expect(await consume('alice', 1, { limit: 1000 })).toMatchObject({ allowed: true, limit: 1000, remaining: 989 })
  expect(await consume('alice')).toMatchObject({ allowed: false, limit: 10, remaining: 0 })
})

describe("Redis's own clock", () => {
  const redisNow = async () => {
    const [seconds, micros] = await client.time()
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  }

  test('decides the period: the reset is the time to the end of the Redis day in the zone', async () => {
    const limiter = createLimiter({
      prefix: 'redis-clock',
      limit: 10,
      period: 'day',
      timeZone: 'Pacific/Kiritimati', // UTC+14: its day is rarely the UTC day
      store: new RedisStore({ client }),
    })
    const calendar = limiter.rules[0]?.calendar
    const before = await redisNow()
    const d = await limiter.consume('k')
    const after = await redisNow()
    expect(d.remaining).toBe(9)
    expect(d.resetMs).toBeLessThanOrEqual(calendar?.msUntilEnd(before) ?? 0)
    expect(d.resetMs).toBeGreaterThanOrEqual(calendar?.msUntilEnd(after) ?? Number.POSITIVE_INFINITY)
  })

  test.each([
    ['three days ahead', 3 * DAY_MS],
    ['40 days behind (a monthly quota too)', -40 * DAY_MS],
  ])(
    'an instance whose clock is %s still counts in the Redis period: it asks again around the Redis time',
    async (_, skewMs) => {
      const options = {
        prefix: `skewed${skewMs}`,
        rules: [
          { name: 'daily', limit: 10, period: 'day', timeZone: 'Europe/Berlin' },
          { name: 'monthly', limit: 100, period: 'month', timeZone: 'America/New_York' },
        ],
      } as const
      const skewed = createLimiter({ ...options, store: new RedisStore({ client }) })
      const honest = createLimiter({ ...options, store: new RedisStore({ client }), logger: { warn() {}, error() {} } })
      const realNow = Date.now.bind(Date)
      const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skewMs)
      let first: Decision
      try {
        await client.config('RESETSTAT')
        first = await skewed.consume('k', 3)
      } finally {
        spy.mockRestore()
      }
      const stats = await client.info('commandstats')
      // Two calls: the first answered SLUICE_CLOCK (nothing read or written), the second counted.
      expect(/^cmdstat_evalsha:calls=(\d+)/m.exec(stats)?.[1]).toBe('2')
      expect(first.rules?.map((r) => r.remaining)).toEqual([7, 97])
      const now = await redisNow()
      expect(first.rules?.[0]?.resetMs).toBeGreaterThan((skewed.rules[0]?.calendar?.msUntilEnd(now) ?? 0) - 5000)
      // An instance on the right time sees the same count, in the same periods.
      expect((await honest.peek('k')).rules?.map((r) => r.remaining)).toEqual([7, 97])
    },
  )

  test("a block's key expires with the block, on the Redis clock", async () => {
    const limiter = createLimiter({
      prefix: 'block-ttl',
      name: 'login',
      limit: 1,
      window: '1m',
      block: '15m',
      store: new RedisStore({ client }),
    })
    await limiter.consume('mallory')
    expect(await limiter.consume('mallory')).toMatchObject({ allowed: false, retryAfterMs: 900_000 })
    const ttl = await client.pttl('block-ttl:login:block:{mallory}')
    expect(ttl).toBeGreaterThan(899_000)
    expect(ttl).toBeLessThanOrEqual(900_000)
    await limiter.reset('mallory')
    expect(await client.exists('block-ttl:login:block:{mallory}')).toBe(0)
  })
})
