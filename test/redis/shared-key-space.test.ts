// Separate RedisStores (other processes, or other stores in this one) whose limiters count in one key space (the
// same prefix, rule name and algorithm) with other limits share one count: each store registers its rules in Redis
// and warns once when another counts there with other parameters. The newcomer notices when it binds, the store that
// was there first at its next refresh (30 s; the tests shorten it through replayStore). The same limits, or another
// prefix or name, never warn; a registration that fails is no outage. Through ioredis and node-redis clients.
import { createLimiter, type Limiter, type Logger, type Store } from '@sluice/core'
import type { RedisStore, RedisStoreClient } from '@sluice/redis'
import Redis from 'ioredis'
import { replayStore } from '../../packages/redis/src/redis-store'
import { fingerprintOf } from '../../packages/redis/src/rule-registry'
import { CLIENT_KINDS, type KindClient, kindClient, recommendedClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'

const REFRESH_MS = 100
const REGISTRY = 'sluice:default:fw:~rules'
const TEN = 'limit=10;windowMs=86400000'

let server: RedisServer
let admin: Redis
const opened: { close(): void }[] = []
const stores: RedisStore[] = []

beforeAll(async () => {
  server = await startRedis()
  admin = new Redis({ host: server.host, port: server.port })
})

afterEach(() => {
  // Closed stores stop refreshing: none writes into the next test's Redis.
  for (const store of stores.splice(0)) store.close()
})

afterAll(async () => {
  for (const client of opened) client.close()
  admin?.disconnect()
  await server?.stop()
})

beforeEach(async () => {
  await admin.flushdb()
})

/** A logger that keeps what it is told. */
function recorder() {
  const warnings: string[] = []
  const errors: string[] = []
  return { warnings, errors, logger: { warn: (m: string) => warnings.push(m), error: (m: string) => errors.push(m) } }
}

/** A store on its own client; `refreshMs` undefined: the default refresh (30 s). */
function store(client: RedisStoreClient, logger: Logger, refreshMs?: number) {
  const made = replayStore(
    refreshMs === undefined ? { client, logger } : { client, logger, registryRefreshMs: refreshMs },
  )
  stores.push(made)
  return made
}

/** Waits for `condition`, polling; the bound only keeps a broken store from hanging the suite. */
async function until(what: string, condition: () => boolean | Promise<boolean>, boundMs = 10_000): Promise<void> {
  const deadline = Date.now() + boundMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Waits until the registry entry of `fingerprint` was written `times` more times (each write moves its lapse on). */
async function refreshed(registry: string, fingerprint: string, times: number): Promise<void> {
  let last = await admin.hget(registry, fingerprint)
  for (let seen = 0; seen < times; ) {
    await until(`refresh ${seen + 1} of ${fingerprint}`, async () => (await admin.hget(registry, fingerprint)) !== last)
    last = await admin.hget(registry, fingerprint)
    seen++
  }
}

/** A fixed window of `limit` a day: the decisions are not what these tests look at. */
function fixedLimiter(limit: number, store: Store, more: { prefix?: string; name?: string } = {}): Limiter {
  return createLimiter({ algorithm: 'fixed-window', limit, window: '1d', store, ...more })
}

describe.each(CLIENT_KINDS)('stores on %s clients', (kind) => {
  let clients: KindClient[] = []

  beforeAll(async () => {
    clients = await Promise.all([1, 2, 3].map(() => kindClient(kind, server.port)))
    opened.push(...clients)
  })

  const clientOf = (i: number) => (clients[i] as KindClient).client

  test('limits 10 and 20 in one key space: each store warns once, naming the key space and both limits', async () => {
    const first = recorder()
    const second = recorder()
    const ten = fixedLimiter(10, store(clientOf(0), first.logger, REFRESH_MS))
    await until('the first registration', async () => (await admin.hlen(REGISTRY)) === 1)
    // The newcomer refreshes every 30 s: a warning within this test comes from its registration at bind.
    const twenty = fixedLimiter(20, store(clientOf(1), second.logger))
    await until('the newcomer to warn', () => second.warnings.length > 0)
    await until('the first store to warn at its refresh', () => first.warnings.length > 0)
    for (const [warning, mine, theirs] of [
      [first.warnings[0], TEN, 'limit=20;windowMs=86400000'],
      [second.warnings[0], 'limit=20;windowMs=86400000', TEN],
    ] as const) {
      expect(warning).toContain('"sluice:default" (fixed-window)')
      expect(warning).toContain(`it has ${theirs}, this store ${mine}`)
      expect(warning).toContain('Give each its own `name` or `prefix`, or the same limits')
    }
    for (let i = 0; i < 30; i++) await Promise.all([ten.consume(`user:${i % 3}`), twenty.consume(`user:${i % 3}`)])
    await refreshed(REGISTRY, TEN, 3)
    expect(first.warnings).toHaveLength(1)
    expect(second.warnings).toHaveLength(1)
    expect([...first.errors, ...second.errors]).toEqual([])
    // They did share one count, as warned: 10 requests of each on 'user:0', and the limit of 10 stopped admitting
    // once both together had 10, so the limit of 20 has 5 left of its own 10 requests, not 10.
    expect((await twenty.peek('user:0')).remaining).toBe(5)
  })

  test('the same limits on three stores, and other limits under another prefix or name: no warning', async () => {
    const logs = [recorder(), recorder(), recorder()]
    const limiters = logs.map((log, i) => fixedLimiter(10, store(clientOf(i), log.logger, REFRESH_MS)))
    // Other limits, but in key spaces of their own.
    fixedLimiter(20, store(clientOf(0), (logs[0] as (typeof logs)[0]).logger), { prefix: 'other' })
    fixedLimiter(30, store(clientOf(1), (logs[1] as (typeof logs)[1]).logger), { name: 'login' })
    for (const limiter of limiters) await limiter.consume('user:1')
    await refreshed(REGISTRY, TEN, 3)
    expect(await admin.hkeys(REGISTRY)).toEqual([TEN])
    expect((await admin.hkeys('other:default:fw:~rules')).sort()).toEqual(['limit=20;windowMs=86400000'])
    expect(await admin.hkeys('sluice:login:fw:~rules')).toEqual(['limit=30;windowMs=86400000'])
    expect(logs.flatMap((log) => [...log.warnings, ...log.errors])).toEqual([])
  })
})

test("a plan's limits (withLimits) are not registered: they vary per request on purpose", async () => {
  const clientA = await recommendedClient(server.port)
  const clientB = await recommendedClient(server.port)
  opened.push({ close: () => clientA.disconnect() }, { close: () => clientB.disconnect() })
  const a = recorder()
  const b = recorder()
  const base = fixedLimiter(10, store(clientA, a.logger, REFRESH_MS))
  for (const limit of [50, 100, 1000]) await base.withLimits({ limit }).consume('pro:1')
  const other = fixedLimiter(10, store(clientB, b.logger, REFRESH_MS))
  await other.withLimits({ limit: 7 }).consume('free:1')
  await refreshed(REGISTRY, TEN, 3)
  expect(await admin.hkeys(REGISTRY)).toEqual([TEN])
  expect([...a.warnings, ...b.warnings]).toEqual([])
})

test('the registry: one hash per key space, each entry lasting three refresh periods, the hash no longer', async () => {
  const client = await recommendedClient(server.port)
  opened.push({ close: () => client.disconnect() })
  const stacked = createLimiter({
    rules: [
      { name: 'user', limit: 5, window: '1s', algorithm: 'sliding-log', block: '1m' },
      { name: 'tenant', limit: 500, window: '1h', algorithm: 'token-bucket' },
      { name: 'daily', limit: 9000, period: 'day', timeZone: 'Europe/Paris' },
    ],
    store: store(client, recorder().logger),
  })
  await until('three registries', async () => (await admin.keys('*~rules')).length === 3)
  const [user, tenant, daily] = stacked.rules.map((rule) => fingerprintOf(rule)) as [string, string, string]
  expect([user, tenant, daily]).toEqual([
    'limit=5;windowMs=1000;blockMs=60000',
    'limit=500;rate=500/3600000ms',
    'limit=9000;period=day;timeZone=Europe/Paris',
  ])
  const [seconds] = await admin.time()
  for (const [key, fingerprint] of [
    ['sluice:user:sl:~rules', user],
    ['sluice:tenant:tb:~rules', tenant],
    ['sluice:daily:cw:~rules', daily],
  ] as const) {
    expect(await admin.hkeys(key)).toEqual([fingerprint])
    const lastsMs = Number(await admin.hget(key, fingerprint)) - Number(seconds) * 1000
    expect(lastsMs).toBeGreaterThan(89_000)
    expect(lastsMs).toBeLessThanOrEqual(91_000)
    expect(await admin.pttl(key)).toBeLessThanOrEqual(90_000)
    expect(await admin.pttl(key)).toBeGreaterThan(80_000)
  }
  // A rate given per second reads a bucket's state in other units than the same rate from limit / window.
  const perSecond = createLimiter({ algorithm: 'token-bucket', limit: 10, rate: 10 }).rules[0]
  const perWindow = createLimiter({ algorithm: 'token-bucket', limit: 10, window: '1s' }).rules[0]
  expect(fingerprintOf(perSecond as NonNullable<typeof perSecond>)).toBe('limit=10;rate=1/100ms')
  expect(fingerprintOf(perWindow as NonNullable<typeof perWindow>)).toBe('limit=10;rate=10/1000ms')
})

test('an entry that lapsed (its store stopped) is dropped and warns no one', async () => {
  await admin.hset(REGISTRY, 'limit=99;windowMs=86400000', '1000') // lapsed in 1970
  const client = await recommendedClient(server.port)
  opened.push({ close: () => client.disconnect() })
  const log = recorder()
  fixedLimiter(10, store(client, log.logger, REFRESH_MS))
  await refreshed(REGISTRY, TEN, 1)
  expect(await admin.hkeys(REGISTRY)).toEqual([TEN])
  expect(log.warnings).toEqual([])
})

test('Redis down at bind: no warning, no outage, no error; the registration is made once Redis is back', async () => {
  const down = await startRedis()
  const client = new Redis({
    host: down.host,
    port: down.port,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    retryStrategy: () => 20,
  })
  client.on('error', () => {})
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  try {
    await until('the client to connect', () => client.status === 'ready')
    await down.kill()
    await until('the client to see the server gone', () => client.status !== 'ready')
    const log = recorder()
    const infos: string[] = []
    const limiter = fixedLimiter(5, store(client, { ...log.logger, info: (m: string) => infos.push(m) }, REFRESH_MS))
    // Registrations keep failing while the client tries to reconnect, a few times.
    let reconnects = 0
    client.on('reconnecting', () => reconnects++)
    await until('a few reconnection attempts', () => reconnects >= 5)
    expect([...log.warnings, ...log.errors, ...infos]).toEqual([])
    await down.restart()
    const back = new Redis({ host: down.host, port: down.port })
    try {
      await until('the registration', async () => (await back.hlen(REGISTRY)) === 1)
      // Redis decides, as if the registration had never failed: nothing was counted locally or logged.
      const decision = await limiter.consume('user:1')
      expect(decision.remaining).toBe(4)
      expect(await back.exists('sluice:default:fw:{user:1}')).toBe(1)
      expect([...log.warnings, ...log.errors, ...infos]).toEqual([])
      expect(unhandled).toEqual([])
    } finally {
      back.disconnect()
    }
  } finally {
    process.off('unhandledRejection', onUnhandled)
    client.disconnect()
    await down.stop()
  }
})

test('a lazy client (lazyConnect) is not connected by the registration: its first decision connects it', async () => {
  const client = new Redis({ host: server.host, port: server.port, lazyConnect: true })
  const clock = await recommendedClient(server.port)
  opened.push({ close: () => client.disconnect() }, { close: () => clock.disconnect() })
  const limiter = fixedLimiter(10, store(client, recorder().logger, REFRESH_MS))
  // Another store's refreshes, on the same period, tell the time.
  fixedLimiter(10, store(clock, recorder().logger, REFRESH_MS), { prefix: 'clock' })
  await until('the clock store to register', async () => (await admin.hlen('clock:default:fw:~rules')) === 1)
  await refreshed('clock:default:fw:~rules', TEN, 3)
  expect(client.status).toBe('wait')
  expect(await admin.exists(REGISTRY)).toBe(0)
  expect((await limiter.consume('user:1')).remaining).toBe(9)
  await until('the registration after the first decision', async () => (await admin.hlen(REGISTRY)) === 1)
})
