// A busy instance must not declare a healthy Redis down: the timeout measures Redis, not this process's event loop.
// A burst of calls, a long synchronous handler or a GC pause delays when this instance reads the replies, not when
// Redis sends them.
import { createLimiter, type Decision } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import type Redis from 'ioredis'
import { recommendedClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'

let server: RedisServer
let client: Redis
const figures: string[] = []

beforeAll(async () => {
  server = await startRedis()
  client = await recommendedClient(server.port)
})

afterAll(async () => {
  client?.disconnect()
  await server?.stop()
  if (figures.length > 0) console.log(`busy-instance figures:\n${figures.join('\n')}`)
})

/** A store with default options (but `onError`, when given) whose log the test reads. */
function storeWithLog(onError: 'closed' | undefined): { store: RedisStore; lines: string[] } {
  const lines: string[] = []
  const logger = { warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m), info: () => {} }
  return { store: new RedisStore({ client, logger, ...(onError === undefined ? {} : { onError }) }), lines }
}

/** What each call ended with: admitted, rejected, or the error's name. */
function tally(results: PromiseSettledResult<Decision>[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const r of results) {
    const what = r.status === 'fulfilled' ? (r.value.allowed ? 'admitted' : 'rejected') : (r.reason as Error).name
    counts[what] = (counts[what] ?? 0) + 1
  }
  return counts
}

// Default options decide locally when Redis is declared down; 'closed' makes every such decision visible as an error.
describe.each([
  ['default options', undefined],
  ["onError: 'closed'", 'closed'],
] as const)('%s', (policy, onError) => {
  test('regression: 50 calls in flight and a 150 ms synchronous handler no longer declare Redis down', async () => {
    const { store, lines } = storeWithLog(onError)
    // A name of its own: the next test counts with other limits, and its store would say the two share a key space.
    const limiter = createLimiter({ name: 'held', limit: 5, window: '1m', store })
    await limiter.consume('warm-up') // connects and loads the script
    const calls = Array.from({ length: 50 }, (_, i) => limiter.consume(`held:${policy}:${i}`))
    const until = performance.now() + 150
    while (performance.now() < until) {} // the handler that holds the event loop
    const counts = tally(await Promise.allSettled(calls))
    const inRedis = await client.exists(...Array.from({ length: 50 }, (_, i) => `sluice:held:sw:{held:${policy}:${i}}`))
    figures.push(
      `  ${policy}: 50 in flight + 150 ms busy: ${JSON.stringify(counts)}, ${inRedis} counted in Redis, log: ${lines}`,
    )
    expect(counts).toEqual({ admitted: 50 })
    expect(lines).toEqual([])
    // Redis counted every one of them: nothing was decided locally.
    expect(inRedis).toBe(50)
  })

  test('regression: 20,000 concurrent consumes on a healthy Redis are all decided by Redis, exactly', async () => {
    const { store, lines } = storeWithLog(onError)
    const limiter = createLimiter({ name: 'burst', limit: 50, window: '1h', store })
    await limiter.consume('warm-up')
    const KEYS = 100
    const started = performance.now()
    const calls = Array.from({ length: 20_000 }, (_, i) => limiter.consume(`burst:${policy}:${i % KEYS}`))
    const dispatchedMs = performance.now() - started
    const counts = tally(await Promise.allSettled(calls))
    const answeredMs = performance.now() - started
    // Each key is full in Redis: the admissions were Redis's, not a local stand-in's.
    let inRedis = 0
    for (let k = 0; k < KEYS; k++) inRedis += 50 - (await limiter.peek(`burst:${policy}:${k}`)).remaining
    figures.push(
      `  ${policy}: 20,000 concurrent: ${JSON.stringify(counts)}, ${inRedis} admissions counted in Redis ` +
        `(dispatch ${dispatchedMs.toFixed(0)} ms, all answered after ${answeredMs.toFixed(0)} ms), log: ${lines}`,
    )
    expect(counts).toEqual({ admitted: 50 * KEYS, rejected: 20_000 - 50 * KEYS })
    expect(lines).toEqual([])
    expect(inRedis).toBe(50 * KEYS)
  }, 60_000)
})
