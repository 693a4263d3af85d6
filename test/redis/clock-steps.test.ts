// A clock that steps back (an NTP step, a VM restored from a snapshot, a failover to a Redis whose clock is behind)
// must neither forget what a key has counted nor lock its client out for the length of the step. Both stores, every
// algorithm: the memory store on an injected clock, Redis on the same instants sent to its script.
import {
  type AlgorithmName,
  createLimiter,
  type Decision,
  type Limiter,
  type LimiterOptions,
  MemoryStore,
  type Store,
} from '@sluice/core'
import Redis from 'ioredis'
import { replayStore } from '../../packages/redis/src/redis-store'
import { CLIENT_KINDS, type ClientKind, type KindClient, kindClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'

let server: RedisServer
let client: Redis
const kindClients = new Map<ClientKind, KindClient>()

beforeAll(async () => {
  server = await startRedis()
  client = new Redis({ host: server.host, port: server.port, lazyConnect: true })
  await client.connect()
  for (const kind of CLIENT_KINDS) kindClients.set(kind, await kindClient(kind, server.port))
})

afterAll(async () => {
  client?.disconnect()
  for (const kindClient of kindClients.values()) kindClient.close()
  await server?.stop()
})

const LIMIT = 5
const WINDOW_MS = 60_000
const HOUR_MS = 3_600_000
// Half way through a minute, so windows do not line up with the step.
const START = Math.floor(1_700_000_000_000 / WINDOW_MS) * WINDOW_MS + 30_000

type Case = AlgorithmName | 'leaky-queue'
const CASES: readonly Case[] = [
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'token-bucket',
  'leaky-bucket',
  'leaky-queue',
]

interface Client {
  send(): Promise<Decision>
  peek(): Promise<Decision>
  clock: { now: number }
  close(): void
}

let prefixes = 0

/** A limiter of `options` on the named store, on a clock the test moves from `start`. */
function limiterOf(storeName: 'memory' | 'redis', options: LimiterOptions, start: number) {
  const clock = { now: start }
  const store: Store & { close?(): void; clear?(): void } =
    storeName === 'memory'
      ? new MemoryStore({ clock: () => clock.now })
      : replayStore({ client, clock: () => clock.now, shortCircuitMaxKeys: 0, timeout: 5000 })
  const limiter: Limiter = createLimiter({ ...options, store, prefix: `step${process.pid}.${prefixes++}` })
  return { limiter, clock, close: () => (store.close ?? store.clear)?.call(store) }
}

function clientOf(storeName: 'memory' | 'redis', algorithm: Case): Client {
  const { limiter, clock, close } = limiterOf(
    storeName,
    { algorithm: algorithm === 'leaky-queue' ? 'leaky-bucket' : algorithm, limit: LIMIT, window: WINDOW_MS },
    START,
  )
  // The queue is the leaky bucket behind schedule(); enqueue() is schedule() without the wait.
  const send = () => (algorithm === 'leaky-queue' ? limiter.enqueue('client') : limiter.consume('client'))
  return { send, peek: () => limiter.peek('client'), clock, close }
}

/** Uses up the client's allowance at START, then steps the clock back one hour. */
async function exhaustThenStepBack(c: Client): Promise<void> {
  for (let i = 0; i < LIMIT; i++) expect((await c.send()).allowed).toBe(true)
  expect((await c.send()).allowed).toBe(false)
  c.clock.now = START - HOUR_MS
}

describe.each(['memory', 'redis'] as const)('%s store', (storeName) => {
  describe.each(CASES)('%s', (algorithm) => {
    test('a clock stepped back one hour does not admit twice the limit within 10 seconds', async () => {
      const c = clientOf(storeName, algorithm)
      await exhaustThenStepBack(c)
      let admitted = 0
      for (let i = 0; i < 2 * LIMIT; i++) {
        if ((await c.send()).allowed) admitted++
        c.clock.now += 1000
      }
      c.close()
      // A bucket or queue of 5 a minute gains one place every 12 s: none within these 10 s.
      expect(admitted).toBe(0)
    })

    test('a clock stepped back one hour does not lock a client out past one window', async () => {
      const c = clientOf(storeName, algorithm)
      await exhaustThenStepBack(c)
      const steppedAt = c.clock.now
      // The client waits as long as each rejection says, and comes back.
      let decision = await c.send()
      const firstRetryAfterMs = decision.retryAfterMs
      while (!decision.allowed && c.clock.now - steppedAt <= 2 * HOUR_MS) {
        c.clock.now += Math.max(1, decision.retryAfterMs)
        decision = await c.send()
      }
      c.close()
      // Rejected at first (the counts are kept), told to wait at most a window, and admitted when it comes back. A
      // window's key time is the start of its last charge's window (so that a charge refunded across Cluster slots
      // leaves it where it was), so the sliding counter waits that window out and 1 ms more, until the weight of its
      // 5 falls to 4 (60,001 ms; 30,001 when the key's time was the charge's instant, T, half way through it).
      const lockoutMs = algorithm === 'sliding-window' ? WINDOW_MS + 1 : WINDOW_MS
      expect(firstRetryAfterMs).toBeGreaterThan(0)
      expect(firstRetryAfterMs).toBeLessThanOrEqual(lockoutMs)
      expect(c.clock.now - steppedAt).toBeLessThanOrEqual(lockoutMs)
    })
  })
})

// Issue 25 item 6: stepped back one hour and forward again, every algorithm let twice the limit through (5 at T, 0 at
// T - 1 h and T - 1 h + 10 s, then 5 more at T + 10 s). A key's time never runs backwards, and a clock that comes back
// decides again: both stores, number for number.
const STEPS = [START - HOUR_MS, START - HOUR_MS + 10_000, START + 10_000, START + WINDOW_MS] as const

/** Every decision of five requests at each instant of STEPS, after the limit was used up at START. */
async function backAndForth(send: () => Promise<Decision>, clock: { now: number }) {
  for (let i = 0; i < LIMIT; i++) expect((await send()).allowed).toBe(true)
  const decisions: Pick<Decision, 'allowed' | 'remaining' | 'resetMs' | 'retryAfterMs'>[][] = []
  for (const at of STEPS) {
    clock.now = at
    const here = []
    for (let i = 0; i < LIMIT; i++) {
      const { allowed, remaining, resetMs, retryAfterMs } = await send()
      here.push({ allowed, remaining, resetMs, retryAfterMs })
    }
    decisions.push(here)
  }
  return decisions
}

const admittedAt = (decisions: { allowed: boolean }[][]) => decisions.map((d) => d.filter((x) => x.allowed).length)

describe.each(CASES)('%s: stepped back one hour and forward again', (algorithm) => {
  test('neither store lets twice the limit through, and both answer alike', async () => {
    const answers = []
    for (const storeName of ['memory', 'redis'] as const) {
      const c = clientOf(storeName, algorithm)
      answers.push(await backAndForth(c.send, c.clock))
      c.close()
    }
    const [memory, redis] = answers as [Decision[][], Decision[][]]
    // Nothing at T - 1 h, T - 1 h + 10 s or T + 10 s (a bucket of 5 a minute gains a place every 12 s); a window
    // after T, the key is admitted again.
    expect(admittedAt(memory).slice(0, 3)).toEqual([0, 0, 0])
    expect(admittedAt(memory)[3]).toBeGreaterThan(0)
    expect(redis).toEqual(memory)
  })
})

// The sequence as a user meets it: the five algorithms with default options (a MemoryStore's and a
// RedisStore's, short-circuit and timeout included; only the clock is the test's), through ioredis and node-redis.
// Before, memory admitted 5 more at T + 10 s, and Redis alike.
describe.each(CLIENT_KINDS)('%s, default options', (kind) => {
  test.each(CASES.filter((c) => c !== 'leaky-queue'))(
    '%s: 5 at T, then 0 at T - 1 h, T - 1 h + 10 s and T + 10 s, memory and Redis alike',
    async (algorithm) => {
      const admitted: number[][] = []
      for (const storeName of ['memory', 'redis'] as const) {
        const clock = { now: START }
        const store =
          storeName === 'memory'
            ? new MemoryStore({ clock: () => clock.now })
            : replayStore({ client: (kindClients.get(kind) as KindClient).client, clock: () => clock.now })
        const limiter = createLimiter({
          algorithm,
          limit: LIMIT,
          window: '1m',
          store,
          prefix: `issue25-${kind}-${process.pid}-${prefixes++}`,
        })
        const here: number[] = []
        for (const at of [START, START - HOUR_MS, START - HOUR_MS + 10_000, START + 10_000]) {
          clock.now = at
          let n = 0
          for (let i = 0; i < LIMIT; i++) if ((await limiter.consume('client')).allowed) n++
          here.push(n)
        }
        ;(store as { close?(): void }).close?.()
        admitted.push(here)
      }
      expect(admitted).toEqual([
        [LIMIT, 0, 0, 0],
        [LIMIT, 0, 0, 0],
      ])
    },
  )
})

test('stacked rules of every algorithm: stepped back one hour and forward again, both stores alike, no second limit', async () => {
  const options: LimiterOptions = {
    rules: [
      { name: 'fixed', algorithm: 'fixed-window', limit: LIMIT, window: WINDOW_MS },
      { name: 'sliding', algorithm: 'sliding-window', limit: LIMIT + 1, window: WINDOW_MS },
      { name: 'log', algorithm: 'sliding-log', limit: LIMIT + 2, window: WINDOW_MS },
      { name: 'tokens', algorithm: 'token-bucket', limit: LIMIT + 3, window: WINDOW_MS },
      { name: 'meter', algorithm: 'leaky-bucket', limit: LIMIT + 4, window: WINDOW_MS },
    ],
  }
  const answers = []
  for (const storeName of ['memory', 'redis'] as const) {
    const { limiter, clock, close } = limiterOf(storeName, options, START)
    const send = () => limiter.consume(['user', 'user', 'user', 'user', 'user'])
    answers.push(await backAndForth(send, clock))
    close()
  }
  const [memory, redis] = answers as [Decision[][], Decision[][]]
  expect(admittedAt(memory).slice(0, 3)).toEqual([0, 0, 0])
  expect(redis).toEqual(memory)
})

// Found by the Cluster differential: Redis deleted a state whose time was up while memory kept it, so after a step
// back memory counted it again and Redis did not. An expired state is gone once seen, in both stores.
describe.each(['memory', 'redis'] as const)('%s store', (storeName) => {
  test.each(CASES.filter((c) => c !== 'leaky-queue'))(
    '%s: a state seen expired does not come back when the clock then steps back',
    async (algorithm) => {
      const c = clientOf(storeName, algorithm)
      for (let i = 0; i < LIMIT; i++) expect((await c.send()).allowed).toBe(true)
      c.clock.now = START + 2 * HOUR_MS
      expect((await c.peek()).remaining).toBe(LIMIT) // expired: a new key's numbers
      c.clock.now = START + 1000
      const after = await c.peek()
      c.close()
      expect(after.remaining).toBe(LIMIT)
      expect(after.allowed).toBe(true)
    },
  )
})

// The calendar window (a quota) as the fixed window: a count from a later period than the clock's moves back to the
// clock's period. Before, a Berlin day quota of 10 used up at 00:30 admitted 10 more once the clock stepped back to
// 23:30 the day before (a fresh period), in both stores alike, so the differential did not see it.
describe.each(['memory', 'redis'] as const)('%s store: a Berlin day quota of 10', (storeName) => {
  const QUOTA = 10
  // Friday 15 March 2024, 00:00 in Berlin (CET, UTC+1; both days around it last 24 hours).
  const MIDNIGHT = Date.parse('2024-03-14T23:00:00Z')
  const HALF_PAST_MIDNIGHT = MIDNIGHT + 30 * 60_000

  /** Uses up the day's 10 at 00:30, then steps the clock back one hour, across midnight, to 23:30 the day before. */
  async function exhaustThenStepBack() {
    const quota = limiterOf(storeName, { limit: QUOTA, period: 'day', timeZone: 'Europe/Berlin' }, HALF_PAST_MIDNIGHT)
    for (let i = 0; i < QUOTA; i++) expect((await quota.limiter.consume('client')).allowed).toBe(true)
    expect((await quota.limiter.consume('client')).allowed).toBe(false)
    quota.clock.now = HALF_PAST_MIDNIGHT - HOUR_MS
    return quota
  }

  test('a clock stepped back one hour across midnight admits 0 of 10 until the clock reaches midnight again', async () => {
    const { limiter, clock, close } = await exhaustThenStepBack()
    // One request a minute from 23:30 to 23:59: every one refused, told to wait until midnight.
    let admitted = 0
    const retryAfters: number[] = []
    for (let i = 0; i < 30; i++) {
      const decision = await limiter.consume('client')
      if (decision.allowed) admitted++
      retryAfters.push(decision.retryAfterMs)
      clock.now += 60_000
    }
    // The clock's midnight (00:00 again): the clock's new day, with 10 of 10; the 11th waits a whole day.
    clock.now = MIDNIGHT
    let afterMidnight = 0
    for (let i = 0; i < QUOTA; i++) if ((await limiter.consume('client')).allowed) afterMidnight++
    const eleventh = await limiter.consume('client')
    close()
    expect(admitted).toBe(0)
    expect(retryAfters).toEqual(Array.from({ length: 30 }, (_, i) => 1_800_000 - i * 60_000))
    expect(afterMidnight).toBe(QUOTA)
    expect(eleventh).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 86_400_000 })
  })

  test('a clock stepped back one hour across midnight does not lock a client out past one period', async () => {
    const { limiter, clock, close } = await exhaustThenStepBack()
    const steppedAt = clock.now
    // The client waits as long as each rejection says, and comes back.
    let decision = await limiter.consume('client')
    const firstRetryAfterMs = decision.retryAfterMs
    while (!decision.allowed && clock.now - steppedAt <= 2 * 86_400_000) {
      clock.now += Math.max(1, decision.retryAfterMs)
      decision = await limiter.consume('client')
    }
    close()
    // Refused at 23:30 (the count is kept) until the clock's midnight, half an hour on; then admitted.
    expect(firstRetryAfterMs).toBe(1_800_000)
    expect(clock.now).toBe(MIDNIGHT)
    expect(decision).toMatchObject({ allowed: true, remaining: QUOTA - 1 })
  })
})
