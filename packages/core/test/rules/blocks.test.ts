// Blocks: a rule's `block` refuses a key that the rule rejected, for that long (a lockout after failed logins).
import { createLimiter, type LimiterOptions, MemoryStore } from '@sluice/core'
import { evaluateRules } from '@sluice/core/store'

const MINUTE_MS = 60_000

function setup(options: LimiterOptions, start = 1_750_000_000_000) {
  const time = { now: start }
  const store = new MemoryStore({ clock: () => time.now })
  return { time, store, limiter: createLimiter({ ...options, store }) }
}

const LOGIN: LimiterOptions = { name: 'login', limit: 5, window: '15m', block: '15m' }

test('5 failed logins, then 15 minutes refused with a decreasing wait, then admitted', async () => {
  const { time, limiter } = setup(LOGIN)
  const start = time.now
  for (let i = 0; i < 5; i++) {
    time.now = start + i * 1000
    expect((await limiter.consume('alice')).allowed).toBe(true)
  }
  time.now = start + 5000
  const sixth = await limiter.consume('alice')
  expect(sixth).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 15 * MINUTE_MS })
  const blockEnd = start + 5000 + 15 * MINUTE_MS
  const waits: number[] = []
  for (const at of [1, 5, 10, 14].map((m) => start + 5000 + m * MINUTE_MS).concat(blockEnd - 1)) {
    time.now = at
    const d = await limiter.consume('alice')
    expect(d).toMatchObject({ allowed: false, remaining: 0, rule: 'login' })
    waits.push(d.retryAfterMs)
  }
  expect(waits).toEqual([14 * MINUTE_MS, 10 * MINUTE_MS, 5 * MINUTE_MS, MINUTE_MS, 1])
  time.now = blockEnd
  expect(await limiter.consume('alice')).toMatchObject({ allowed: true })
})

test('a request during a block neither extends it nor counts; a rejection after it starts another', async () => {
  const { time, limiter } = setup({ ...LOGIN, algorithm: 'fixed-window', window: '1h', block: '10m' })
  const start = Math.ceil(time.now / 3_600_000) * 3_600_000
  time.now = start
  await limiter.consume('bob', 5)
  // The window's own wait (an hour) is longer than the block.
  expect(await limiter.consume('bob')).toMatchObject({ allowed: false, retryAfterMs: 60 * MINUTE_MS })
  time.now = start + 5 * MINUTE_MS
  expect(await limiter.consume('bob')).toMatchObject({ allowed: false, retryAfterMs: 55 * MINUTE_MS })
  time.now = start + 59 * MINUTE_MS
  // The first block ended at 10 minutes; this rejection starts a new one, longer than the window's last minute.
  expect(await limiter.consume('bob')).toMatchObject({ allowed: false, retryAfterMs: 10 * MINUTE_MS })
  time.now = start + 69 * MINUTE_MS
  // Nothing refused during the blocks was counted: the new window admits its whole limit.
  expect(await limiter.consume('bob', 5)).toMatchObject({ allowed: true, remaining: 0 })
})

test("a block's wait is the longer of the block and the rule's own", async () => {
  const { time, limiter } = setup({ name: 'daily', limit: 2, period: 'day', block: '1h' })
  const midnight = Date.UTC(2025, 5, 2)
  time.now = midnight + 10 * 3_600_000 // 10:00 UTC
  await limiter.consume('k', 2)
  const refused = await limiter.consume('k')
  // Blocked for an hour, but the quota has 14 hours to go: the wait is to midnight.
  expect(refused).toMatchObject({ allowed: false, retryAfterMs: 14 * 3_600_000, resetMs: 14 * 3_600_000 })
  time.now += 2 * 3_600_000
  expect((await limiter.consume('k')).retryAfterMs).toBe(12 * 3_600_000)
  time.now = midnight + 24 * 3_600_000
  expect(await limiter.consume('k')).toMatchObject({ allowed: true })
})

test('reset(key) lifts the block, and a peek never starts one', async () => {
  const { limiter } = setup(LOGIN)
  await limiter.consume('carol', 5)
  expect(await limiter.peek('carol')).toMatchObject({ allowed: false, remaining: 0 })
  // Peeking at a full key reports the window's own wait, not a block: nothing was blocked.
  expect((await limiter.peek('carol')).retryAfterMs).toBeLessThan(15 * MINUTE_MS)
  expect((await limiter.consume('carol')).retryAfterMs).toBe(15 * MINUTE_MS)
  await limiter.reset('carol')
  expect(await limiter.consume('carol')).toMatchObject({ allowed: true, remaining: 4 })
})

test('a cost that can never fit does not block, nor does a request another rule rejected', async () => {
  const { time, limiter } = setup({
    rules: [
      { name: 'login', limit: 5, window: '15m', block: '15m' },
      { name: 'global', limit: 2, window: '1s', algorithm: 'fixed-window' },
    ],
  })
  expect(await limiter.consume('dave', 6)).toMatchObject({ allowed: false, costExceedsCapacity: true })
  await limiter.consume('dave')
  await limiter.consume('dave')
  // The global rule rejects this one; the login rule admitted it, so nothing blocks the key.
  expect(await limiter.consume('dave')).toMatchObject({ allowed: false, rule: 'global' })
  time.now += 1000
  expect(await limiter.consume('dave')).toMatchObject({ allowed: true })
  expect(await limiter.consume(['erin', 'dave'], 1)).toMatchObject({ allowed: true })
})

test('keys are blocked one by one, and only under the rule that rejected them', async () => {
  const { limiter } = setup({
    rules: [
      { name: 'user', limit: 1, window: '1m', block: '5m' },
      { name: 'ip', limit: 100, window: '1m' },
    ],
  })
  await limiter.consume(['u1', '10.0.0.1'])
  const refused = await limiter.consume(['u1', '10.0.0.1'])
  expect(refused).toMatchObject({ allowed: false, rule: 'user', retryAfterMs: 5 * MINUTE_MS })
  expect(refused.rules?.[1]).toMatchObject({ rule: 'ip', allowed: true, remaining: 99 })
  // Another user behind the same address is not blocked.
  expect(await limiter.consume(['u2', '10.0.0.1'])).toMatchObject({ allowed: true })
})

test('a block is kept apart from the counts: a store full of blocks still evicts by recency, within maxKeys', async () => {
  const time = { now: 0 }
  const store = new MemoryStore({ maxKeys: 50, clock: () => time.now })
  const limiter = createLimiter({ limit: 1, window: '1m', block: '1h', store })
  for (let i = 0; i < 200; i++) {
    await limiter.consume(`k${i}`)
    await limiter.consume(`k${i}`)
  }
  expect(store.size).toBe(50)
  // The last key is still blocked: its block and its count are among the 50 most recent.
  expect(await limiter.consume('k199')).toMatchObject({ allowed: false, retryAfterMs: 3_600_000 })
})

test('for a store that still holds a block at its end (its own expiry lags), the key is admitted from that instant', () => {
  // evaluateRules decides for every store: a block ending at blockedUntil refuses until then, and no longer, whether
  // or not the store has dropped it yet.
  const rules = createLimiter(LOGIN).rules
  const blockEnd = 1_750_000_900_000
  const at = (now: number) => evaluateRules(rules, [undefined], now, 1, true, [blockEnd])[0]
  expect(at(blockEnd - 1)).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 1 })
  expect(at(blockEnd)).toMatchObject({ allowed: true, remaining: 4 })
  expect(at(blockEnd + 1)).toMatchObject({ allowed: true, remaining: 4 })
})
