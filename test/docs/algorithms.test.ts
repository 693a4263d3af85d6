// The worked examples of docs/algorithms.md, number for number, on a memory store whose clock the test moves.
// (The Redis store is held to the same decisions by test/redis/differential.test.ts.)
import { createLimiter, type LimiterOptions, MemoryStore, type RateLimitError } from '@sluice/core'

function setup(options: LimiterOptions, start = 0) {
  const time = { now: start }
  const limiter = createLimiter({ ...options, store: new MemoryStore({ clock: () => time.now }) })
  const many = async (count: number, key: string | string[] = 'k', cost = 1) => {
    const decisions = []
    for (let i = 0; i < count; i++) decisions.push(await limiter.consume(key, cost))
    return decisions
  }
  return { time, limiter, many }
}

test('fixed-window: 20 admitted within 100 ms around a boundary; waits of 50 and 59 950 ms', async () => {
  const W = 60_000
  const { time, many } = setup({ algorithm: 'fixed-window', limit: 10, window: '60s' }, 10 * W - 50)
  const first = await many(11)
  time.now += 100
  const second = await many(11)
  expect(first.slice(0, 10).every((d) => d.allowed) && second.slice(0, 10).every((d) => d.allowed)).toBe(true)
  expect(first[10]).toMatchObject({ allowed: false, retryAfterMs: 50 })
  expect(second[10]).toMatchObject({ allowed: false, retryAfterMs: 59_950 })
})

test('sliding-log: rejected at 1999 with a wait of 1 ms, admitted at 2000 when the entry is exactly W old', async () => {
  const { time, limiter } = setup({ algorithm: 'sliding-log', limit: 5, window: '1s' }, 1000)
  expect((await limiter.consume('k', 5)).allowed).toBe(true)
  time.now = 1999
  expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1 })
  time.now = 2000
  expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 4, resetMs: 1000 })
})

test('sliding-window: an estimate of 90 leaves 10, then 9', async () => {
  const { time, limiter } = setup({ algorithm: 'sliding-window', limit: 100, window: '60s' })
  await limiter.consume('k', 80)
  time.now = 75_000
  await limiter.consume('k', 30)
  expect((await limiter.peek('k')).remaining).toBe(10)
  expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 9 })
})

test('sliding-window: a cost of 3 waits 101 ms, and the key resets in 801 ms', async () => {
  const { time, limiter } = setup({ algorithm: 'sliding-window', limit: 10, window: '1s' })
  await limiter.consume('k', 10)
  time.now = 1100
  expect(await limiter.consume('k', 3)).toMatchObject({ allowed: false, retryAfterMs: 101, resetMs: 801 })
  time.now = 1200
  expect((await limiter.consume('k', 3)).allowed).toBe(false)
  time.now = 1201
  expect((await limiter.consume('k', 3)).allowed).toBe(true)
})

test('token-bucket: 2000 ms, then 1500 ms at a quarter token; a cost of 25 waits 5000 then 10 000 ms', async () => {
  const slow = setup({ algorithm: 'token-bucket', limit: 1, rate: 0.5 })
  await slow.limiter.consume('k')
  expect((await slow.limiter.consume('k')).retryAfterMs).toBe(2000)
  slow.time.now = 500
  expect((await slow.limiter.consume('k')).retryAfterMs).toBe(1500)
  slow.time.now = 1999
  expect((await slow.limiter.consume('k')).allowed).toBe(false)
  slow.time.now = 2000
  expect((await slow.limiter.consume('k')).allowed).toBe(true)

  const { limiter, many } = setup({ algorithm: 'token-bucket', limit: 30, window: '30s' })
  await many(10)
  expect(await limiter.consume('k', 25)).toMatchObject({ allowed: false, retryAfterMs: 5000, remaining: 20 })
  expect((await many(5)).every((d) => d.allowed)).toBe(true)
  expect((await limiter.consume('k', 25)).retryAfterMs).toBe(10_000)
})

test('leaky-bucket: ten at once fill it (reset 1000 ms), the eleventh waits 100 ms', async () => {
  const { many } = setup({ algorithm: 'leaky-bucket', limit: 10, window: '1s' })
  const decisions = await many(11)
  expect(decisions[9]).toMatchObject({ allowed: true, remaining: 0, resetMs: 1000 })
  expect(decisions[10]).toMatchObject({ allowed: false, retryAfterMs: 100 })
})

describe('the queue', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }))
  afterEach(() => jest.useRealTimers())

  test('nine at once: six leave at 0.5 to 3.0 s, three are refused at once with a wait of 500 ms', async () => {
    const limiter = createLimiter({ algorithm: 'leaky-bucket', limit: 6, window: '3s', store: new MemoryStore() })
    const left: number[] = []
    const refused: number[] = []
    const all = Array.from({ length: 9 }, () =>
      limiter.schedule('sms').then(
        () => left.push(Date.now()),
        (error: RateLimitError) => refused.push(error.decision.retryAfterMs),
      ),
    )
    await jest.advanceTimersByTimeAsync(0)
    expect(refused).toEqual([500, 500, 500])
    await jest.advanceTimersByTimeAsync(3000)
    await Promise.all(all)
    expect(left).toEqual([500, 1000, 1500, 2000, 2500, 3000])
  })
})

test('stacked rules: the decisions name tenant; the refused one reports user 5 remaining, tenant 0', async () => {
  const { limiter, many } = setup({
    rules: [
      { name: 'user', limit: 5, window: '1m' },
      { name: 'tenant', limit: 3, window: '1m' },
    ],
  })
  expect((await many(3, 'x')).map((d) => d.rule)).toEqual(['tenant', 'tenant', 'tenant'])
  const refused = await limiter.consume(['user:1', 'x'])
  expect(refused).toMatchObject({ allowed: false, rule: 'tenant' })
  expect(refused.rules?.map((d) => [d.rule, d.allowed, d.remaining])).toEqual([
    ['user', true, 5],
    ['tenant', false, 0],
  ])
})

test('a cost above the limit: never admittable, an endless wait, nothing charged', async () => {
  const { limiter } = setup({ algorithm: 'fixed-window', limit: 30, window: '1m' })
  expect(await limiter.consume('k', 40)).toMatchObject({
    allowed: false,
    costExceedsCapacity: true,
    retryAfterMs: Number.POSITIVE_INFINITY,
    remaining: 30,
  })
})
