// Outage: redis-server is killed under load. 'local' keeps limiting from memory, 'open' admits, 'closed' rejects;
// no consume outlasts the timeout by more than 50 ms of the instance's free time (and none hangs past the backstop),
// nothing is left unhandled, the outage is logged once, and when Redis comes back it decides again within a second
// (with an empty script cache, as after any restart). Every case runs through an ioredis client and through a
// node-redis client, each with the options the README recommends.
import { createLimiter, type Decision, type Limiter, StoreUnavailableError } from '@sluice/core'
import { type FailurePolicy, RedisStore, type RedisStoreClient } from '@sluice/redis'
import Redis from 'ioredis'
import { scriptFor } from '../../packages/redis/src/script'
import { CLIENT_KINDS, type ClientKind, type KindClient, kindClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { stallMonitor } from './stall-monitor'

const TIMEOUT_MS = 100
const LIMIT = 5

let server: RedisServer
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)

beforeAll(async () => {
  // DEBUG SLEEP makes a slow server; Redis 7 refuses DEBUG unless enabled.
  server = await startRedis({ args: ['--enable-debug-command', 'yes'] })
  process.on('unhandledRejection', onUnhandled)
})

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled)
  await server?.stop()
})

beforeEach(async () => {
  if (!server.running) await server.restart()
})

interface Harness {
  client: KindClient
  store: RedisStore
  limiter: Limiter
  warnings: string[]
  infos: string[]
  /** Commands the store sent, by name. */
  sent: Record<string, number>
}

// The methods a store calls, by their names in either library (node-redis: evalSha).
const STORE_METHODS = ['evalsha', 'evalSha', 'eval', 'del']

async function harness(kind: ClientKind, onError: FailurePolicy): Promise<Harness> {
  // The recommended options, and a short, steady reconnect delay: both libraries' defaults grow to 2 s between
  // attempts. Connection errors while the server is down are expected here; the clients drop them.
  const client = await kindClient(kind, server.port, 50)
  const sent: Record<string, number> = {}
  // The store's narrow client type lets the test count what reaches the client.
  const counting = new Proxy(client.client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      // Only the methods the client has: a store tells the libraries apart by them.
      if (typeof property !== 'string' || !STORE_METHODS.includes(property) || typeof value !== 'function') {
        return value
      }
      return (...args: unknown[]) => {
        const name = property.toLowerCase()
        sent[name] = (sent[name] ?? 0) + 1
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  }) as RedisStoreClient
  const warnings: string[] = []
  const infos: string[] = []
  const logger = { warn: (m: string) => warnings.push(m), error: () => {}, info: (m: string) => infos.push(m) }
  const store = new RedisStore({ client: counting, timeout: TIMEOUT_MS, onError, logger })
  const limiter = createLimiter({ algorithm: 'sliding-log', limit: LIMIT, window: '1m', store })
  // Connect and load the script before the clock matters: on a busy machine the very first call (connection,
  // NOSCRIPT, EVAL) can outlast the 100 ms timeout and start an outage before the test's own.
  await client.ping()
  await client.scriptLoad(scriptFor(['sl']).source)
  return { client, store, limiter, warnings, infos, sent }
}

interface Timed {
  ms: number
  /** How long, of `ms`, this process ran code (or waited for a CPU to run it) rather than waiting for I/O. */
  activeMs: number
  decision?: Decision
  error?: unknown
}

async function timed(work: () => Promise<Decision>): Promise<Timed> {
  const started = performance.now()
  const loop = performance.eventLoopUtilization()
  const spent = () => ({ ms: performance.now() - started, activeMs: performance.eventLoopUtilization(loop).active })
  try {
    const decision = await work()
    return { ...spent(), decision }
  } catch (error) {
    return { ...spent(), error }
  }
}

/**
 * The longest any call waited while this process was free to read a reply (its event loop waiting for I/O): the
 * time the timeout counts (see deadlines.ts). On a loaded machine a process that runs code also waits for a CPU to
 * run it, spread over every turn of its loop; no store answers faster than its process runs.
 */
const longestFreeWait = (results: readonly Timed[]) => Math.max(0, ...results.map((r) => r.ms - r.activeMs))

/**
 * No call outlasts the timeout by more than 50 ms of this process's free time (beyond its worst freeze, during which
 * even a timer cannot run); and none hangs, by the wall clock, past the backstop (30 timeouts).
 */
function expectPrompt(results: readonly Timed[], frozenMs: number): void {
  expect(longestFreeWait(results)).toBeLessThanOrEqual(TIMEOUT_MS + 50 + frozenMs)
  expect(Math.max(0, ...results.map((r) => r.ms))).toBeLessThanOrEqual(30 * TIMEOUT_MS + 50 + frozenMs)
}

/** Eight concurrent clients on distinct keys until stopped; every call is timed. */
function load(limiter: Limiter): { stop: () => Promise<Timed[]> } {
  const results: Timed[] = []
  let running = true
  let n = 0
  const lanes = Array.from({ length: 8 }, async (_, lane) => {
    while (running) {
      results.push(await timed(() => limiter.consume(`load:${lane}:${n++ % 50}`)))
      // Local decisions resolve without I/O: pace the lane so timers (and the test) still run.
      await pause(1)
    }
  })
  return {
    async stop() {
      running = false
      await Promise.all(lanes)
      return results
    },
  }
}

/** Pacing for the load while the server is down: real time passes, no window is observed. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** From the server being back to the first decision that Redis made (its key appears in Redis), in ms. */
async function timeUntilRedisDecides(h: Harness, admin: Redis): Promise<number> {
  const back = performance.now()
  for (let i = 0; performance.now() - back < 3000; i++) {
    await h.limiter.consume(`after:${i}`).catch(() => undefined) // 'closed' throws until Redis answers
    if ((await admin.exists(`sluice:default:sl:{after:${i}}`)) === 1) return performance.now() - back
    await pause(10)
  }
  return Number.POSITIVE_INFINITY
}

const quietLogger = { warn: () => {}, error: () => {}, info: () => {} }
const figures: string[] = []
afterAll(() => {
  if (figures.length > 0) console.log(`outage figures:\n${figures.join('\n')}`)
})

describe.each(CLIENT_KINDS)('%s', (kind) => {
  test("'local': killed under load, the instance keeps limiting from memory, then Redis decides again", async () => {
    const h = await harness(kind, 'local')
    const admin = new Redis({ host: server.host, port: server.port, retryStrategy: () => 50 })
    admin.on('error', () => {})
    try {
      expect((await h.limiter.consume('victim')).allowed).toBe(true)
      expect(await admin.exists('sluice:default:sl:{victim}')).toBe(1) // Redis counted it, not the fallback
      const running = load(h.limiter)
      const stall = stallMonitor()
      await pause(100)
      // What the store sent before: its decisions, and one EVAL when it bound its rule, their registration in Redis.
      const sentBeforeKill = { ...h.sent }
      const killedAt = performance.now()
      await server.kill()
      await pause(400)
      // Limited locally: a fresh local count admits exactly the limit.
      const victim: Decision[] = []
      for (let i = 0; i < 2 * LIMIT; i++) victim.push(await h.limiter.consume('victim'))
      expect(victim.filter((d) => d.allowed).length).toBe(LIMIT)
      const sentDuringOutage = { ...h.sent }
      await pause(300)
      const results = await running.stop()
      const frozenMs = stall.stop()
      const outageMs = performance.now() - killedAt
      const sentAfter = h.sent

      const slowest = results.reduce((most, r) => Math.max(most, r.ms), 0)
      expect(results.length).toBeGreaterThan(100)
      expect(results.filter((r) => r.error !== undefined)).toEqual([])
      expectPrompt(results, frozenMs)
      expect(h.warnings).toHaveLength(1)
      expect(h.warnings[0]).toMatch(/Redis is unavailable .*deciding from local memory/)
      // A dead Redis is not asked on every request: a probe (one EVAL) per probe interval, not an EVALSHA per request.
      expect((sentAfter['evalsha'] ?? 0) - (sentDuringOutage['evalsha'] ?? 0)).toBe(0)
      expect((sentAfter['eval'] ?? 0) - (sentBeforeKill['eval'] ?? 0)).toBeLessThanOrEqual(
        Math.ceil(outageMs / 250) + 1,
      )

      await server.restart() // empty, and with an empty script cache
      const recoveryMs = await timeUntilRedisDecides(h, admin)
      expect(recoveryMs).toBeLessThan(1000)
      expect(h.infos).toHaveLength(1)
      expect(h.warnings).toHaveLength(1)
      expect((await h.limiter.consume('victim')).remaining).toBe(LIMIT - 1) // Redis's count, from an empty server
      figures.push(
        `  ${kind} local: ${results.length} consumes under load, slowest ${slowest.toFixed(1)} ms ` +
          `(${longestFreeWait(results).toFixed(1)} ms free; process frozen at most ${frozenMs.toFixed(0)} ms); ` +
          `Redis deciding again ${recoveryMs.toFixed(0)} ms after restart`,
      )
    } finally {
      h.client.close()
      admin.disconnect()
    }
  }, 20_000)

  test("'open': while Redis is down every request is admitted, fast", async () => {
    const h = await harness(kind, 'open')
    try {
      expect((await h.limiter.consume('open')).allowed).toBe(true)
      const stall = stallMonitor()
      await server.kill()
      const results: Timed[] = []
      for (let i = 0; i < 3 * LIMIT; i++) results.push(await timed(() => h.limiter.consume('open')))
      const frozenMs = stall.stop()
      expect(results.map((r) => r.decision?.allowed)).toEqual(Array(3 * LIMIT).fill(true))
      const slowest = Math.max(...results.map((r) => r.ms))
      expectPrompt(results, frozenMs)
      expect(h.warnings).toHaveLength(1)
      figures.push(
        `  ${kind} open: first consume after the kill ${results[0]?.ms.toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms`,
      )
    } finally {
      h.client.close()
    }
  })

  test("'closed': while Redis is down every request is rejected with StoreUnavailableError, fast", async () => {
    const h = await harness(kind, 'closed')
    try {
      expect((await h.limiter.consume('closed')).allowed).toBe(true)
      const stall = stallMonitor()
      await server.kill()
      const results: Timed[] = []
      for (let i = 0; i < 10; i++) results.push(await timed(() => h.limiter.consume('closed')))
      const frozenMs = stall.stop()
      for (const r of results) expect(r.error).toBeInstanceOf(StoreUnavailableError)
      const slowest = Math.max(...results.map((r) => r.ms))
      expectPrompt(results, frozenMs)
      expect(h.warnings).toHaveLength(1)
      await expect(h.limiter.reset('closed')).rejects.toBeInstanceOf(StoreUnavailableError)
      figures.push(
        `  ${kind} closed: first consume after the kill ${results[0]?.ms.toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms`,
      )
    } finally {
      h.client.close()
    }
  })

  test('a Redis slower than the timeout is an outage too, and its late replies are absorbed', async () => {
    const h = await harness(kind, 'closed')
    const admin = new Redis({ host: server.host, port: server.port })
    try {
      await h.limiter.consume('slow')
      // DEBUG SLEEP blocks the server for 300 ms: the store's calls time out, their replies come later.
      const sleeping = await sleepRedis(admin)
      const stall = stallMonitor()
      const results: Timed[] = []
      for (let i = 0; i < 5; i++) results.push(await timed(() => h.limiter.consume('slow')))
      const frozenMs = stall.stop()
      await sleeping.ended
      expectPrompt(results, frozenMs)
      expect(results[0]?.error).toBeInstanceOf(StoreUnavailableError)
      figures.push(
        `  ${kind} DEBUG SLEEP: first consume ${results[0]?.ms.toFixed(1)} ms, slowest ` +
          `${Math.max(...results.map((r) => r.ms)).toFixed(1)} ms (${longestFreeWait(results).toFixed(1)} ms free; ` +
          `process frozen at most ${frozenMs.toFixed(0)} ms)`,
      )
      await pause(50)
    } finally {
      h.client.close()
      admin.disconnect()
    }
  })

  test("'closed': a server stopped with SIGSTOP (a hang, not a refusal) fails over within the timeout under load", async () => {
    const h = await harness(kind, 'closed')
    try {
      expect((await h.limiter.consume('stopped')).allowed).toBe(true)
      const running = load(h.limiter)
      const stall = stallMonitor()
      await pause(100)
      server.pause() // the connection stays open; nothing is answered
      await pause(400)
      const results = await running.stop()
      const frozenMs = stall.stop()
      server.resume()
      const slowest = results.reduce((most, r) => Math.max(most, r.ms), 0)
      const failed = results.filter((r) => r.error !== undefined)
      expect(failed.length).toBeGreaterThan(0)
      for (const r of failed) expect(r.error).toBeInstanceOf(StoreUnavailableError)
      expectPrompt(results, frozenMs)
      expect(h.warnings).toHaveLength(1)
      const admin = new Redis({ host: server.host, port: server.port })
      try {
        const recoveryMs = await timeUntilRedisDecides(h, admin)
        expect(recoveryMs).toBeLessThan(1000)
        figures.push(
          `  ${kind} SIGSTOP: ${results.length} consumes under load, slowest ${slowest.toFixed(1)} ms ` +
            `(${longestFreeWait(results).toFixed(1)} ms free; process frozen at most ${frozenMs.toFixed(0)} ms); Redis deciding again ${recoveryMs.toFixed(0)} ms after SIGCONT`,
        )
      } finally {
        admin.disconnect()
      }
      expect(h.infos).toHaveLength(1)
    } finally {
      h.client.close()
    }
  })

  test('a Redis hung for longer than the backstop runs none of the calls the store gave up on when it resumes', async () => {
    // SIGSTOP keeps the connection open: the calls made meanwhile wait in Redis's socket, and a Redis that resumes
    // reads and runs them (a Cluster master that resumes answers them MOVED, and the client follows that to the
    // promoted replica). The store answered them by onError long before: past its deadline (30 × timeout after its
    // send) a call changes nothing.
    const h = await harness(kind, 'closed')
    // Not a fixed window: its epoch-aligned hour could end during the test, and the count with it (this test once
    // read no state at all, on a run that crossed the hour).
    const counter = createLimiter({
      name: 'late',
      algorithm: 'sliding-log',
      limit: 1000,
      window: '1h',
      store: h.store,
    })
    const admin = new Redis({ host: server.host, port: server.port })
    try {
      for (let i = 0; i < 3; i++) expect((await counter.consume(`hung:${kind}`)).allowed).toBe(true)
      server.pause()
      const during = await Promise.all(Array.from({ length: 20 }, () => timed(() => counter.consume(`hung:${kind}`))))
      for (const r of during) expect(r.error).toBeInstanceOf(StoreUnavailableError)
      await pause(30 * TIMEOUT_MS + 300)
      server.resume()
      const recoveryMs = await timeUntilRedisDecides(h, admin)
      expect(recoveryMs).toBeLessThan(1000)
      // Redis answers a connection in order: the calls that waited in its socket ran before the ones that found it
      // back, so their effect is in the count now (the key's own entries, read by Redis).
      expect((await counter.peek(`hung:${kind}`)).remaining).toBe(1000 - 3)
      figures.push(`  ${kind} hung ${30 * TIMEOUT_MS + 300} ms: 20 calls given up, 0 charged when Redis resumed`)
    } finally {
      h.client.close()
      admin.disconnect()
    }
  })

  test("80 ms spent inside a send are this instance's time, not Redis's; a sleeping Redis is still caught a timeout after", async () => {
    // A socket write in Node does not block: a send that takes 80 ms is this instance not running (a slow client wrapper,
    // a GC pause, the machine giving its CPU away), which must never make a healthy Redis look down. It no longer
    // counts against the timeout; a Redis that does not answer is still declared down within the timeout after it.
    const h = await harness(kind, 'closed')
    const admin = new Redis({ host: server.host, port: server.port })
    const HELD_MS = 80
    const heldSend = new Proxy(h.client.client, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver)
        if ((property !== 'evalsha' && property !== 'evalSha') || typeof value !== 'function') return value
        return (...args: unknown[]) => {
          const until = performance.now() + HELD_MS
          while (performance.now() < until) {} // the instance, busy
          return (value as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    }) as RedisStoreClient
    const store = new RedisStore({ client: heldSend, timeout: TIMEOUT_MS, onError: 'open', logger: quietLogger })
    const limiter = createLimiter({ limit: LIMIT, window: '1m', store })
    try {
      expect((await limiter.consume('held-send')).remaining).toBe(LIMIT - 1) // a healthy Redis: decided by Redis
      const sleeping = await sleepRedis(admin)
      const stall = stallMonitor()
      const result = await timed(() => limiter.consume('held-send'))
      const frozenMs = Math.max(0, stall.stop() - HELD_MS)
      await sleeping.ended
      expect(result.decision?.remaining).toBe(LIMIT) // 'open' answered: a key that has used nothing
      // The 80 ms held are this process running code: the free wait leaves them out, as the deadline does.
      expectPrompt([result], frozenMs)
    } finally {
      h.client.close()
      admin.disconnect()
    }
  })
})

/**
 * Blocks the server for 300 ms with DEBUG SLEEP, sent on `admin` once its connection is ready: a command sent on a
 * connection still being made reached the server only after the next consume (CI: that consume was decided by Redis,
 * no StoreUnavailableError). Resolves 20 ms after the send, with the sleep's own reply (when it ends).
 */
async function sleepRedis(admin: Redis): Promise<{ readonly ended: Promise<unknown> }> {
  await admin.ping()
  const ended = admin.call('DEBUG', 'SLEEP', '0.3')
  await pause(20)
  return { ended }
}

test('no promise was left unhandled', () => {
  expect(unhandled).toEqual([])
})
