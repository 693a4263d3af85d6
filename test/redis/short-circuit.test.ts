// The local short-circuit of RedisStore (a rejection answered without a round trip) under default options, on a real
// redis-server through ioredis and node-redis: it answers exactly what Redis would, blocks, stacked rules and quotas
// included, and a reset made through another instance reaches it within shortCircuitMaxMs.
import { createLimiter, type Decision, type LimiterOptions, MemoryStore } from '@sluice/core'
import { replayStore } from '../../packages/redis/src/redis-store'
import { CLIENT_KINDS, type ClientKind, type KindClient, kindClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'

let server: RedisServer
const clients = new Map<ClientKind, KindClient>()

beforeAll(async () => {
  server = await startRedis()
  for (const kind of CLIENT_KINDS) clients.set(kind, await kindClient(kind, server.port))
})

afterAll(async () => {
  for (const client of clients.values()) client.close()
  await server?.stop()
})

let prefixes = 0

/** A limiter on a MemoryStore and one on a RedisStore with default options, both on the clock `now()`. */
function twins(kind: ClientKind, options: LimiterOptions, now: () => number) {
  const prefix = `sc${process.pid}.${prefixes++}`
  const client = (clients.get(kind) as KindClient).client
  return {
    memory: createLimiter({ ...options, prefix, store: new MemoryStore({ clock: now }) }),
    redis: createLimiter({ ...options, prefix, store: replayStore({ client, clock: now }) }),
  }
}

const verdict = (d: Decision) => [d.allowed, d.retryAfterMs]

describe.each(CLIENT_KINDS)('%s', (kind) => {
  test('a rejection that starts a block in Redis is not answered locally: the block is kept', async () => {
    // Fixed window of 4 s, limit 1, block 3 s; requests 0.1, 0.2, 3.5 and 4.5 s into a window. The third comes after
    // the block of the second ended but within its window's rejection: Redis starts a new block, which holds the fourth.
    const windowStart = 1_700_000_000_000 - (1_700_000_000_000 % 4000)
    let now = windowStart
    const { memory, redis } = twins(kind, { algorithm: 'fixed-window', limit: 1, window: '4s', block: '3s' }, () => now)
    const answers: unknown[][] = []
    for (const at of [100, 200, 3500, 4500]) {
      now = windowStart + at
      const expected = await memory.consume('login')
      expect(await redis.consume('login')).toEqual(expected)
      answers.push(verdict(expected))
    }
    expect(answers).toEqual([
      [true, 0],
      [false, 3800],
      [false, 3000],
      [false, 2000],
    ])
  })

  test('a local answer carries every stacked rule as Redis would: a burst window that ended shows its new allowance', async () => {
    // burst 10 per 2 s and daily 3: the daily quota is spent 100 ms before the burst window ends; 500 ms later the
    // burst rule is in a new window, with 10 remaining.
    const burstStart = 1_700_000_000_000 - (1_700_000_000_000 % 2000)
    let now = burstStart + 1800
    const rules = {
      rules: [
        { name: 'burst', algorithm: 'fixed-window', limit: 10, window: '2s' },
        { name: 'daily', limit: 3, period: 'day' },
      ],
    } as LimiterOptions
    const { memory, redis } = twins(kind, rules, () => now)
    for (let i = 0; i < 3; i++) expect(await redis.consume(['u', 'u'])).toEqual(await memory.consume(['u', 'u']))
    now = burstStart + 1900
    expect(await redis.consume(['u', 'u'])).toEqual(await memory.consume(['u', 'u']))
    now = burstStart + 2400
    const expected = await memory.consume(['u', 'u'])
    expect(expected.rules?.map((d) => [d.rule, d.remaining, d.resetMs])).toEqual([
      ['burst', 10, 1600],
      ['daily', 0, expect.any(Number)],
    ])
    expect(await redis.consume(['u', 'u'])).toEqual(expected)
  })

  test('a reset through another instance reaches the short-circuit of this one within shortCircuitMaxMs', async () => {
    let now = 1_700_000_000_000
    const client = (clients.get(kind) as KindClient).client
    const options = {
      algorithm: 'fixed-window',
      limit: 1,
      window: '1m',
      block: '15m',
      prefix: `sc${process.pid}.${prefixes++}`,
    } as const
    const here = createLimiter({ ...options, store: replayStore({ client, clock: () => now }) })
    const there = createLimiter({ ...options, store: replayStore({ client, clock: () => now }) })
    await here.consume('user')
    expect(verdict(await here.consume('user'))).toEqual([false, 900_000])
    await there.reset('user')
    now += 999
    // Within the bound this instance has not asked Redis again: the documented staleness.
    expect(verdict(await here.consume('user'))).toEqual([false, 899_001])
    now += 1
    expect(verdict(await here.consume('user'))).toEqual([true, 0])
  })
})
