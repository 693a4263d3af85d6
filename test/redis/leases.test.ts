// Concurrency leases on Redis: the script mirrors the lease table of the core decision for decision; four processes
// on one Redis never run more than the limit at once (counted inside their handlers); a killed instance's leases come
// back after `lease`, while a live instance renews the leases of its long requests; leases Redis lost (a restart, a
// flush) or never had (granted in memory during an outage) are counted again; a key holding something else fails
// its own calls alone.
import { type ChildProcess, fork } from 'node:child_process'
import { get as httpGet } from 'node:http'
import { join } from 'node:path'
import { createConcurrencyLimiter, keyHash, StoreKeyError, StoreUnavailableError } from '@sluice/core'
import { acquireLeases, type LeaseScope, type LeaseStore, type LeaseTable, renewLeases } from '@sluice/core/store'
import { concurrencyLimit } from '@sluice/express'
import { RedisLeaseStore } from '@sluice/redis'
import express from 'express'
import Redis from 'ioredis'
import request from 'supertest'
import { VirtualTime } from '../../examples/overload/virtual-time'
import { LEASE_SCRIPT_SHA, leaseKeys } from '../../packages/redis/src/lease-store'
import leaseSource from '../../packages/redis/src/lua/lease.lua'
import { CLIENT_KINDS, type KindClient, kindClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import type { LeaseWorkerReply } from './workers/lease-worker'

let server: RedisServer
let client: Redis
let nodeRedis: KindClient
const figures: string[] = []

beforeAll(async () => {
  server = await startRedis()
  client = new Redis({ host: server.host, port: server.port })
  nodeRedis = await kindClient('node-redis', server.port)
}, 60_000)

afterAll(async () => {
  client?.disconnect()
  nodeRedis?.close()
  await server?.stop()
  if (figures.length > 0) console.log(`lease figures:\n${figures.join('\n')}`)
})

/** Redis's clock in ms, the one leases live on. */
async function redisNow(): Promise<number> {
  const [seconds, micros] = await client.time()
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}

test('SCRIPT LOAD returns the SHA the store calls', async () => {
  expect(await client.script('LOAD', leaseSource)).toBe(LEASE_SCRIPT_SHA)
})

/** The lease tables of the core (acquireLeases, renewLeases) over the same keys, as the script keeps them in Redis. */
function tableModel() {
  const tables = new Map<string, LeaseTable>()
  const of = (scope: LeaseScope, key: string) =>
    leaseKeys(scope, key).map((name) => {
      let table = tables.get(name)
      if (table === undefined) {
        table = new Map()
        tables.set(name, table)
      }
      return table
    })
  return {
    tables,
    acquire: (scope: LeaseScope, key: string, holder: string, now: number) =>
      acquireLeases(of(scope, key), scope.limits, holder, now, scope.leaseMs),
    renew: (scope: LeaseScope, key: string, holders: readonly string[], now: number) =>
      renewLeases(of(scope, key), holders, now, scope.leaseMs),
    release: (scope: LeaseScope, key: string, holder: string) => {
      for (const table of of(scope, key)) table.delete(holder)
    },
  }
}

test.each(CLIENT_KINDS)(
  'the script decides and renews as the lease tables of the core, call for call, on a shared trace (%s)',
  async (kind) => {
    let now = 1_000_000
    const clock = () => now
    // A fresh script cache: the first call is answered NOSCRIPT and loads the script, through either client.
    await client.script('FLUSH')
    const storeClient = kind === 'ioredis' ? client : nodeRedis.client
    // A generous timeout, and no silent fallback: a slow answer on a loaded machine must not become a local decision.
    const redis = new RedisLeaseStore({ client: storeClient, clock, timeout: 10_000, onError: 'closed' })
    const model = tableModel()
    const scope: LeaseScope = { prefix: `trace-${kind}`, name: 'diff', limits: [3, 5], global: true, leaseMs: 1000 }
    const held: { key: string; holder: string }[] = []
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    for (let step = 0; step < 400; step++) {
      now += Math.floor(random() * 120)
      const action = random()
      if (action < 0.55) {
        const key = `k${Math.floor(random() * 3)}`
        const holder = `h${step}`
        const [fromRedis, fromModel] = [await redis.acquire(scope, key, holder), model.acquire(scope, key, holder, now)]
        expect(fromRedis).toEqual(fromModel)
        if (fromModel.allowed) held.push({ key, holder })
      } else if (action < 0.8 && held.length > 0) {
        const [{ key, holder }] = held.splice(Math.floor(random() * held.length), 1) as [
          { key: string; holder: string },
        ]
        await redis.release(scope, key, holder)
        model.release(scope, key, holder)
      } else if (held.length > 0) {
        const { key } = held[0] as { key: string }
        const holders = held.filter((h) => h.key === key).map((h) => h.holder)
        if (random() < 0.2) {
          // Redis loses this key's table (the global one keeps its leases): the renewal takes them all again.
          await client.del(leaseKeys(scope, key)[0] as string)
          model.tables.delete(leaseKeys(scope, key)[0] as string)
        }
        await redis.renew(scope, key, holders)
        model.renew(scope, key, holders, now)
      }
    }
    // The same leases, with the same expiries, in every table (expired ones not yet dropped included).
    for (const [name, table] of model.tables) {
      const stored = await client.zrange(name, 0, -1, 'WITHSCORES')
      const pairs: [string, number][] = []
      for (let i = 0; i < stored.length; i += 2) pairs.push([stored[i] as string, Number(stored[i + 1])])
      expect(new Map(pairs)).toEqual(table)
    }
  },
)

test('every table gets an expiry; NOSCRIPT after SCRIPT FLUSH is answered by loading the script again', async () => {
  const store = new RedisLeaseStore({ client, timeout: 10_000, onError: 'closed' })
  const scope: LeaseScope = { prefix: 'ttl', name: 'default', limits: [2], global: false, leaseMs: 30_000 }
  await client.script('FLUSH')
  expect((await store.acquire(scope, 'a', 'h1')).allowed).toBe(true)
  const [key] = leaseKeys(scope, 'a') as [string]
  const ttl = await client.pttl(key)
  expect(ttl).toBeGreaterThan(25_000)
  expect(ttl).toBeLessThanOrEqual(30_000)
  await store.release(scope, 'a', 'h1')
  expect(await client.zcard(key)).toBe(0)
})

test("Redis down under onError 'closed' refuses with StoreUnavailableError; 'local' counts in memory", async () => {
  const dead = new Redis({
    host: '127.0.0.1',
    port: 1,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  })
  const logger = { warn: jest.fn(), error: jest.fn(), info: jest.fn() }
  const closed = createConcurrencyLimiter({
    limit: 1,
    store: new RedisLeaseStore({ client: dead, onError: 'closed', logger }),
  })
  await expect(closed.acquire('a')).rejects.toBeInstanceOf(StoreUnavailableError)
  const local = createConcurrencyLimiter({ limit: 1, store: new RedisLeaseStore({ client: dead, logger }) })
  const first = await local.acquire('a')
  expect(first.allowed).toBe(true)
  expect((await local.acquire('a')).allowed).toBe(false)
  await first.release()
  const again = await local.acquire('a')
  expect(again.allowed).toBe(true)
  await again.release() // nothing left for the store to write back to Redis
  expect(logger.warn).toHaveBeenCalledTimes(2) // once per store and outage, not once per call
  dead.disconnect()
})

/** A GET on a connection of its own (no keep-alive socket that the server may close under it). */
function get(url: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }))
    })
    request.on('error', reject)
  })
}

interface LeaseWorker {
  readonly url: string
  readonly process: ChildProcess
  stop(): Promise<void>
}

async function startLeaseWorker(limit: number, leaseMs: number): Promise<LeaseWorker> {
  const child = fork(
    join(__dirname, 'workers/lease-worker.ts'),
    [String(server.port), String(limit), String(leaseMs)],
    {
      execArgv: ['--require', join(__dirname, 'workers/lua-text.cjs'), '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  )
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (reply: LeaseWorkerReply) => (reply.type === 'ready' ? resolve(reply.port) : reject(reply)))
    child.once('exit', (code) => reject(new Error(`lease worker exited before it was ready (${code})`)))
  })
  return {
    url: `http://127.0.0.1:${port}`,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        if (child.connected) child.send({ type: 'exit' })
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
        await exited
        clearTimeout(timer)
      }
    },
  }
}

describe('4 instances (processes) on one Redis, each an Express app with concurrencyLimit({ limit: 2 })', () => {
  const LIMIT = 2
  const LEASE_MS = 1000
  let workers: LeaseWorker[] = []
  beforeAll(async () => {
    workers = await Promise.all([0, 1, 2, 3].map(() => startLeaseWorker(LIMIT, LEASE_MS)))
  }, 60_000)
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()))
  })

  test('they never run more than the limit at once, counted inside the handlers', async () => {
    await client.del('inside')
    const rounds: { admitted: number; refused: number; most: number }[] = []
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const res = await get(`${(workers[i % 4] as LeaseWorker).url}/count?ms=15`)
          return { status: res.status, inside: res.status === 200 ? (res.body as { inside: number }).inside : 0 }
        }),
      )
      rounds.push({
        admitted: answers.filter((a) => a.status === 200).length,
        refused: answers.filter((a) => a.status === 429).length,
        most: Math.max(...answers.map((a) => a.inside)),
      })
    }
    figures.push(
      `  4 processes, limit ${LIMIT}: ${rounds.map((r) => `${r.admitted} run, ${r.refused} refused, at most ${r.most} at once`).join('; ')}`,
    )
    for (const round of rounds) {
      expect(round.admitted + round.refused).toBe(200)
      expect(round.most).toBeLessThanOrEqual(LIMIT)
      expect(round.refused).toBeGreaterThan(0)
    }
    // The limit is reached, not merely respected: the processes together do fill it.
    expect(Math.max(...rounds.map((r) => r.most))).toBe(LIMIT)
  }, 60_000)

  test("a killed instance's leases come back after `lease`; a live one renews the leases of its long requests", async () => {
    const [live, , , doomed] = workers as [LeaseWorker, LeaseWorker, LeaseWorker, LeaseWorker]
    // This process counts against the same table as the workers' /hold (name 'crash', key 'shared').
    const store = new RedisLeaseStore({ client, timeout: 10_000, onError: 'closed' })
    const here = createConcurrencyLimiter({ limit: LIMIT, lease: LEASE_MS, name: 'crash', store })
    // The live worker holds one slot for longer than three leases; the doomed one takes the other and dies.
    void get(`${live.url}/hold`).catch(() => undefined)
    await new Promise<void>((resolve) => live.process.once('message', () => resolve()))
    void get(`${doomed.url}/hold`).catch(() => undefined)
    await new Promise<void>((resolve) => doomed.process.once('message', () => resolve()))
    const heldAt = await redisNow()
    doomed.process.kill('SIGKILL')
    const refusals: number[] = []
    let admittedAt = 0
    for (;;) {
      const slot = await here.acquire('shared')
      if (slot.allowed) {
        admittedAt = await redisNow()
        await slot.release()
        break
      }
      refusals.push(await redisNow())
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    // The dead lease expired no sooner than `lease` after it was taken (on the Redis clock), and not long after.
    expect(admittedAt - heldAt).toBeGreaterThanOrEqual(LEASE_MS - 50)
    expect(admittedAt - heldAt).toBeLessThan(LEASE_MS + 2000)
    expect(refusals.length).toBeGreaterThan(0)
    // The live request is still held, its lease renewed past three leases: one slot is free, not two.
    const second = await here.acquire('shared')
    expect(second.allowed).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS))
    expect((await here.acquire('shared')).allowed).toBe(false)
    await second.release()
    figures.push(
      `  killed instance: its lease came back ${admittedAt - heldAt} ms after it was taken (lease ${LEASE_MS} ms); ` +
        `the live instance's lease held ${3 * LEASE_MS}+ ms by renewal`,
    )
    await get(`${live.url}/free`)
  }, 60_000)
})

/** Waits until `redis` answers again (its client reconnects on its own after a restart). */
async function answering(...clients: { ping(): Promise<unknown> }[]): Promise<void> {
  for (const redis of clients) {
    while (
      !(await redis.ping().then(
        () => true,
        () => false,
      ))
    )
      await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Waits until `check` holds, asking again every 20 ms (an event to wait for, not a time). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20))
}

/** `store`, keeping each renewal a limiter starts, so that a test can wait until Redis has answered them. */
function watchingRenewals(store: LeaseStore): { store: LeaseStore; renewed(): Promise<unknown> } {
  const renewals: Promise<void>[] = []
  return {
    store: {
      acquire: (scope, key, holder) => store.acquire(scope, key, holder),
      release: (scope, key, holder) => store.release(scope, key, holder),
      renew(scope, key, holders) {
        const renewal = Promise.resolve(store.renew(scope, key, holders))
        renewals.push(renewal)
        return renewal
      },
    },
    renewed: () => Promise.all(renewals.splice(0)),
  }
}

function collectingLogger(lines: string[]) {
  return {
    warn: (message: string) => lines.push(`warn ${message}`),
    error: (message: string) => lines.push(`error ${message}`),
    info: (message: string) => lines.push(`info ${message}`),
  }
}

describe.each(CLIENT_KINDS)('%s, stores with default options: leases Redis lost or never had', (kind) => {
  let one: KindClient
  let two: KindClient
  beforeEach(async () => {
    ;[one, two] = [await kindClient(kind, server.port), await kindClient(kind, server.port)]
  })
  afterEach(() => {
    one.close()
    two.close()
  })

  test.each<[string, () => Promise<unknown>]>([
    ['a restart', () => server.restart()],
    ['FLUSHALL', () => client.flushall()],
  ])(
    'regression: a lease lost in %s was never taken again; once its holder renews, nobody is admitted beyond the limit',
    async (loss, lose) => {
      const lines: string[] = []
      const logger = collectingLogger(lines)
      const name = `lost-${kind}-${loss === 'FLUSHALL' ? 'flush' : 'restart'}`
      const time = new VirtualTime()
      // Two instances: A renews on virtual time (a third of the default 30 s lease), B is never asked to.
      const watched = watchingRenewals(new RedisLeaseStore({ client: one.client, logger }))
      const a = createConcurrencyLimiter({ limit: 1, name, store: watched.store, timers: time })
      const b = createConcurrencyLimiter({ limit: 1, name, store: new RedisLeaseStore({ client: two.client, logger }) })
      const [table] = leaseKeys(a.scope, 'job') as [string]
      const first = await a.acquire('job')
      expect(first.allowed).toBe(true)

      await lose()
      await answering(one, two, client)
      // Redis has forgotten A's lease, and nobody can tell until A renews it: B is admitted meanwhile.
      const second = await b.acquire('job')
      expect(second.allowed).toBe(true)
      time.runUntil(10_000)
      await watched.renewed()
      // A's renewal took its lease again although the table was full: both requests in flight are counted.
      expect(await client.zcard(table)).toBe(2)
      await second.release()
      // A still runs: a third request is refused, on either instance.
      const third = await b.acquire('job')
      expect([third.allowed, third.inFlight]).toEqual([false, 1])
      expect((await a.acquire('job')).allowed).toBe(false)
      await first.release()
      const fourth = await b.acquire('job')
      expect(fourth.allowed).toBe(true)
      await fourth.release()
      expect(lines).toEqual([])
    },
  )

  test('regression: slots granted in memory during an outage were not counted once Redis was back', async () => {
    const lines: string[] = []
    const logger = collectingLogger(lines)
    const name = `outage-${kind}`
    const a = createConcurrencyLimiter({ limit: 1, name, store: new RedisLeaseStore({ client: one.client, logger }) })
    const b = createConcurrencyLimiter({ limit: 1, name, store: new RedisLeaseStore({ client: two.client }) })
    await server.kill()
    const first = await a.acquire('job') // onError 'local': counted in A's memory
    expect(first.allowed).toBe(true)
    await server.restart()
    await answering(one, two, client)
    // A's next acquire writes its local slot to Redis before Redis decides: it is refused, and so is B's.
    expect((await a.acquire('job')).allowed).toBe(false)
    expect((await b.acquire('job')).allowed).toBe(false)
    await first.release()
    const next = await b.acquire('job')
    expect(next.allowed).toBe(true)
    await next.release()
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['warn', 'info'])
  })

  test('regression: an instance with no request to make left its local slots out of Redis after the outage', async () => {
    const name = `outage-idle-${kind}`
    const logger = collectingLogger([])
    const a = createConcurrencyLimiter({ limit: 1, name, store: new RedisLeaseStore({ client: one.client, logger }) })
    const b = createConcurrencyLimiter({ limit: 1, name, store: new RedisLeaseStore({ client: two.client }) })
    const [table] = leaseKeys(a.scope, 'job') as [string]
    await server.kill()
    const first = await a.acquire('job')
    expect(first.allowed).toBe(true)
    await server.restart()
    await answering(one, two, client)
    // A asks nothing more, yet writes its slot to Redis itself once Redis answers, before B comes.
    await until(async () => (await client.zcard(table)) === 1)
    expect((await b.acquire('job')).allowed).toBe(false)
    await first.release()
    expect(await client.zcard(table)).toBe(0)
  })

  test('regression: one lease key holding a string was taken for a Redis outage; it fails its own calls alone, logged once', async () => {
    const lines: string[] = []
    const logger = collectingLogger(lines)
    const name = `poisoned-${kind}`
    const limiter = createConcurrencyLimiter({
      limit: 1,
      name,
      store: new RedisLeaseStore({ client: one.client, logger }),
    })
    // Another instance: Redis's count reaches it.
    const other = createConcurrencyLimiter({ limit: 1, name, store: new RedisLeaseStore({ client: two.client }) })
    const [poisoned] = leaseKeys(limiter.scope, 'mallory') as [string]
    await client.set(poisoned, 'not a lease table')
    const failures: unknown[] = []
    for (let i = 0; i < 50; i++) {
      await limiter.acquire('mallory').then(
        () => failures.push('admitted'),
        (error: unknown) => failures.push(error),
      )
      const slot = await limiter.acquire('alice')
      expect(slot.allowed).toBe(true)
      expect((await other.acquire('alice')).allowed).toBe(false)
      await slot.release()
    }
    expect(failures).toHaveLength(50)
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(StoreKeyError)
      // The key is personal data: the error and the log line name it by its hash (issue 25: eventKeys 'hash').
      const { key, keyHash: hashed, rule } = failure as StoreKeyError
      expect([key, hashed, rule]).toEqual([undefined, keyHash('mallory'), name])
    }
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(
      `error sluice: the Redis key of concurrency limiter "${name}" for the key with keyHash ${keyHash('mallory')}`,
    )
    expect(lines[0]).not.toContain('mallory')
    expect(lines[0]).toContain('holds a string')
    expect(await client.get(poisoned)).toBe('not a lease table')

    // Through HTTP: the middleware answers that key by its onError (503 by default), and logs nothing more.
    const httpLines: string[] = []
    const httpLogger = collectingLogger(httpLines)
    const store = new RedisLeaseStore({ client: one.client, logger: httpLogger })
    const app = express()
    app.get(
      '/',
      concurrencyLimit({ limit: 1, name, store, logger: httpLogger, key: (req) => String(req.query['user']) }),
      (_req, res) => {
        res.send('ok')
      },
    )
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) {
      for (const user of ['mallory', 'alice']) statuses.push((await request(app).get(`/?user=${user}`)).status)
    }
    expect(statuses).toEqual([503, 200, 503, 200, 503, 200])
    expect(httpLines).toHaveLength(1)
    expect(httpLines[0]).toContain(keyHash('mallory'))
    expect(httpLines[0]).not.toContain('mallory')
  })
})

test('a bad global table is named as the bad key: the script says which table it could not use', async () => {
  const lines: string[] = []
  const name = 'poisoned-global'
  const store = new RedisLeaseStore({ client, logger: collectingLogger(lines) })
  const limiter = createConcurrencyLimiter({ limit: 1, globalLimit: 5, name, store })
  const [keyTable, globalTable] = leaseKeys(limiter.scope, 'alice') as [string, string]
  await client.rpush(globalTable, 'job')
  await expect(limiter.acquire('alice')).rejects.toThrow(StoreKeyError)
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(`the Redis key ${JSON.stringify(globalTable)}`)
  expect(lines[0]).toContain('holds a list')
  // Nothing was written before the script found the bad table.
  expect(await client.exists(keyTable)).toBe(0)
  await client.del(globalTable)
})
