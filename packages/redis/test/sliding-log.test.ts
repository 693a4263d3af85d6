// One client with a large limit must not eat Redis's CPU: a sliding-log call reads the entries it needs, not the
// whole log, so its cost in Redis (INFO commandstats, never the wall clock) hardly grows with the log's length.
import { createLimiter } from '@sluice/core'
import type Redis from 'ioredis'
import { privateRedis, STARVED_REDIS_TIMEOUT_MS } from '../../../scripts/redis-suite'
import { storedSlidingLog } from '../../../scripts/sliding-log-layout'
import { redisKeyOf } from '../src/keys'
import { replayStore } from '../src/redis-store'

let client: Redis

privateRedis((redis) => ({ client } = redis))

const START_MS = 1_800_000_000_000
const LIMIT = 100_000
const CALLS = 300

/** The µs Redis spent per EVALSHA (or EVAL) since the last reset. */
async function usecPerScriptCall(): Promise<number> {
  const stats = await client.info('commandstats')
  let calls = 0
  let usec = 0
  for (const command of ['evalsha', 'eval']) {
    const match = new RegExp(`^cmdstat_${command}:calls=(\\d+),usec=(\\d+)`, 'm').exec(stats)
    calls += Number(match?.[1] ?? 0)
    usec += Number(match?.[2] ?? 0)
  }
  return usec / calls
}

/** Fills the log of `key` with `entries` admissions 1 ms apart (each its own entry), a batch of 50 at a time. */
async function fill(
  consume: (key: string) => Promise<unknown>,
  setNow: (ms: number) => void,
  key: string,
  entries: number,
) {
  for (let i = 0; i < entries; i += 50) {
    const batch: Promise<unknown>[] = []
    for (let j = i; j < Math.min(entries, i + 50); j++) {
      setNow(START_MS + j)
      batch.push(consume(key))
    }
    await Promise.all(batch)
  }
}

test('a sliding-log call costs Redis about as much with 20,000 entries in the window as with 100', async () => {
  let now = START_MS
  const store = replayStore({ client, clock: () => now, timeout: STARVED_REDIS_TIMEOUT_MS })
  const limiter = createLimiter({ algorithm: 'sliding-log', limit: LIMIT, window: '1h', store })
  const rule = limiter.rules[0] as (typeof limiter.rules)[0]
  const costs: Record<number, number> = {}
  for (const entries of [100, 1000, 20_000]) {
    const key = `log:${entries}`
    // The log written at once, rather than by `entries` calls.
    await client.set(redisKeyOf(rule, key), storedSlidingLog(entries, START_MS, rule.windowMs), 'PX', 3_600_000)
    now = START_MS + entries
    expect((await limiter.consume(key)).remaining).toBe(LIMIT - entries - 1)
    // One call at a time, each a new entry, each at a later time: the cost of a call on a log of that length.
    await client.config('RESETSTAT')
    for (let i = 1; i <= CALLS; i++) {
      now = START_MS + entries + i
      expect((await limiter.consume(key)).remaining).toBe(LIMIT - entries - 1 - i)
    }
    costs[entries] = await usecPerScriptCall()
  }
  console.log(
    `sliding-log: µs in Redis per call at 100 / 1k / 20k entries: ${[100, 1000, 20_000].map((n) => costs[n]?.toFixed(1)).join(' / ')}`,
  )
  expect(costs[20_000]).toBeLessThan(3 * (costs[100] as number))
}, 120_000)

test('a log whose entries expire as it goes stays about as long as its window', async () => {
  let now = START_MS
  const store = replayStore({ client, clock: () => now, timeout: STARVED_REDIS_TIMEOUT_MS })
  const limiter = createLimiter({ algorithm: 'sliding-log', limit: 500, window: '500ms', store })
  const key = 'rolling'
  // 2,000 calls 1 ms apart through a 500 ms window: the log turns over four times.
  await fill(
    (k) => limiter.consume(k),
    (ms) => (now = ms),
    key,
    2000,
  )
  now = START_MS + 2000
  // 500 entries in the window ending now (those after START_MS + 1500 ms), all but one admitted by its limit of 500.
  const decision = await limiter.peek(key)
  expect(decision.remaining).toBe(1)
  expect(decision.allowed).toBe(true)
  const [redisKey] = await client.keys('*rolling*')
  // The dead prefix is cut off once it outgrows the live entries: never more than twice the window's entries (and a
  // header), however many have passed.
  expect(await client.strlen(redisKey as string)).toBeLessThanOrEqual(32 + 16 * 2 * 500 + 16 * 32)
})

test('a log stored by an earlier version (expiry, then time and cost per entry) is read, and kept in the new layout', async () => {
  let now = START_MS
  const store = replayStore({ client, clock: () => now, timeout: STARVED_REDIS_TIMEOUT_MS })
  const limiter = createLimiter({ algorithm: 'sliding-log', limit: 10, window: '1s', store })
  const [redisKey] = limiter.rules.map((rule) => redisKeyOf(rule, 'upgraded'))
  // Three entries: cost 2 at +0, cost 1 at +100, cost 3 at +200; the state expires a window after the newest.
  const earlier = Buffer.alloc(8 + 16 * 3)
  const doubles = [START_MS + 1200, START_MS, 2, START_MS + 100, 1, START_MS + 200, 3]
  for (const [i, value] of doubles.entries()) earlier.writeDoubleLE(value, 8 * i)
  await client.set(redisKey as string, earlier, 'PX', 3_600_000)
  now = START_MS + 500
  expect((await limiter.peek('upgraded')).remaining).toBe(4)
  expect((await limiter.consume('upgraded', 4)).remaining).toBe(0)
  // At +1000 the first entry (cost 2) has expired: 2 left, and a refund of 5 takes back the newest 4 and 1 of the 3.
  now = START_MS + 1000
  expect((await limiter.peek('upgraded')).remaining).toBe(2)
  await limiter.refund('upgraded', 5)
  expect((await limiter.peek('upgraded')).remaining).toBe(7)
  const rejected = await limiter.consume('upgraded', 9)
  expect(rejected.allowed).toBe(false)
  // 3 in the window (1 at +100, 2 left at +200): room for 9 once both have expired, at +1200.
  expect(rejected.retryAfterMs).toBe(200)
})
