// Concurrency leases on Redis: the script mirrors the memory lease table decision for decision; four processes on
// one Redis never run more than the limit at once (counted inside their handlers); a killed instance's leases come
// back after `lease`, while a live instance renews the leases of its long requests.
import { type ChildProcess, fork } from 'node:child_process'
import { get as httpGet } from 'node:http'
import { join } from 'node:path'
import { createConcurrencyLimiter, MemoryLeaseStore, StoreUnavailableError } from '@sluice/core'
import type { LeaseScope } from '@sluice/core/store'
import { RedisLeaseStore } from '@sluice/redis'
import Redis from 'ioredis'
import leaseSource from '../../packages/redis/src/lease.lua'
import { LEASE_SCRIPT_SHA, leaseKeys } from '../../packages/redis/src/lease-store'
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

test.each(CLIENT_KINDS)(
  'the script decides as the memory lease table, call for call, on a shared trace (%s)',
  async (kind) => {
    let now = 1_000_000
    const clock = () => now
    // A fresh script cache: the first call is answered NOSCRIPT and loads the script, through either client.
    await client.script('FLUSH')
    const storeClient = kind === 'ioredis' ? client : nodeRedis.client
    // A generous timeout, and no silent fallback: a slow answer on a loaded machine must not become a local decision.
    const redis = new RedisLeaseStore({ client: storeClient, clock, timeout: 10_000, onError: 'closed' })
    const memory = new MemoryLeaseStore({ clock })
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
        const [fromRedis, fromMemory] = [await redis.acquire(scope, key, holder), memory.acquire(scope, key, holder)]
        expect(fromRedis).toEqual(fromMemory)
        if (fromMemory.allowed) held.push({ key, holder })
      } else if (action < 0.8 && held.length > 0) {
        const [{ key, holder }] = held.splice(Math.floor(random() * held.length), 1) as [
          { key: string; holder: string },
        ]
        await redis.release(scope, key, holder)
        memory.release(scope, key, holder)
      } else if (held.length > 0) {
        const { key } = held[0] as { key: string }
        const holders = held.filter((h) => h.key === key).map((h) => h.holder)
        await redis.renew(scope, key, holders)
        memory.renew(scope, key, holders)
      }
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
  expect((await local.acquire('a')).allowed).toBe(true)
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
  const LEASE_MS = 600
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
