// Per-request limits (plans): Limiter.withLimits gives the same rules with other limits, counting in the same keys,
// so a key whose limit changes keeps what it has used.
import { createLimiter, type LimiterOptions, MemoryStore } from '@sluice/core'

function setup(options: LimiterOptions, start = 1_750_000_020_000) {
  const time = { now: start }
  const warnings: string[] = []
  const store = new MemoryStore({ clock: () => time.now })
  const logger = { warn: (message: string) => warnings.push(message), error() {} }
  return { time, warnings, limiter: createLimiter({ ...options, store, logger }) }
}

test('free (10 a minute) and pro (1000 a minute) on one limiter; an upgrade mid-window keeps the usage', async () => {
  const { limiter, warnings } = setup({ name: 'api', limit: 10, window: '1m', algorithm: 'fixed-window' })
  const free = limiter.withLimits({ limit: 10 })
  const pro = limiter.withLimits({ limit: 1000 })
  for (let i = 0; i < 8; i++) await free.consume('alice')
  expect(await free.peek('alice')).toMatchObject({ limit: 10, remaining: 2 })
  // Alice upgrades: the 8 she used still count, against the higher limit.
  expect(await pro.consume('alice')).toMatchObject({ allowed: true, limit: 1000, remaining: 991 })
  for (let i = 0; i < 200; i++) await pro.consume('bob')
  // Bob downgrades: 200 used is over the free limit, so he waits for the window, with nothing remaining.
  expect(await free.consume('bob')).toMatchObject({ allowed: false, limit: 10, remaining: 0 })
  // The plans share the limiter's key space on purpose: nothing is reported as shared.
  expect(warnings).toEqual([])
  expect(free).toBe(limiter)
})

test('a variant is one per distinct set of limits, cached, and the cache is bounded', async () => {
  const { limiter } = setup({ limit: 5, window: '1s' })
  const first = limiter.withLimits({ limit: 6 })
  expect(limiter.withLimits({ limit: 6 })).toBe(first)
  expect(limiter.withLimits({ limit: 6, window: 1000 })).toBe(first)
  expect(first.rules[0]).toMatchObject({ limit: 6, windowMs: 1000, keySpace: limiter.rules[0]?.keySpace })
  for (let limit = 7; limit < 300; limit++) limiter.withLimits({ limit })
  // The first was evicted long ago and is built again; a recent one is still the same object.
  expect(limiter.withLimits({ limit: 6 })).not.toBe(first)
  expect(limiter.withLimits({ limit: 299 })).toBe(limiter.withLimits({ limit: 299 }))
  // A variant's own variants are the limiter's.
  expect(first.withLimits({ limit: 299 })).toBe(limiter.withLimits({ limit: 299 }))
  expect(first.withLimits({ limit: 5 })).toBe(limiter)
})

test('stacked rules take one limits object per rule; undefined keeps a rule as it is', async () => {
  const { limiter } = setup({
    rules: [
      { name: 'minute', limit: 10, window: '1m' },
      { name: 'daily', limit: 100, period: 'day' },
    ],
  })
  const pro = limiter.withLimits([{ limit: 1000 }, { limit: 100_000 }])
  await limiter.consume('k', 10)
  expect((await pro.consume('k')).rules?.map((r) => [r.limit, r.remaining])).toEqual([
    [1000, 989],
    [100_000, 99_989],
  ])
  expect(limiter.withLimits([undefined, { limit: 50 }]).rules.map((r) => r.limit)).toEqual([10, 50])
})

test.each<[string, LimiterOptions, unknown, RegExp]>([
  [
    'a zero limit',
    { limit: 5, window: '1s' },
    { limit: 0 },
    /option "limit" must be a positive whole number \(got 0\)/,
  ],
  ['a fractional limit', { limit: 5, window: '1s' }, { limit: 2.5 }, /"limit" must be a positive whole number/],
  [
    'a bad window',
    { limit: 5, window: '1s' },
    { window: 'soon' },
    /option "window" must be milliseconds or a duration/,
  ],
  [
    "a bucket's window",
    { limit: 5, window: '1s', algorithm: 'token-bucket' },
    { window: '2s' },
    /option "window" cannot vary: a bucket's state counts in units of its rate/,
  ],
  [
    "a quota's window",
    { rules: [{ name: 'daily', limit: 5, period: 'day' }] },
    [{ window: '1h' }],
    /option "rules\[0\].window" cannot vary: a quota counts per calendar period/,
  ],
  [
    'one object for two rules',
    {
      rules: [
        { name: 'a', limit: 1, window: 1 },
        { name: 'b', limit: 1, window: 1 },
      ],
    },
    { limit: 3 },
    /an array of 2/,
  ],
  ['a string', { limit: 5, window: '1s' }, 'pro', /limits must be an object/],
  [
    "a rule's limits that are a number",
    {
      rules: [
        { name: 'a', limit: 1, window: 1 },
        { name: 'b', limit: 1, window: 1 },
      ],
    },
    [undefined, 5],
    /the limits of rule "b" must be an object \(got 5\)/,
  ],
])('%s is a TypeError naming the option, never a wrong decision', (_, options, limits, message) => {
  const { limiter } = setup(options)
  expect(() => limiter.withLimits(limits as never)).toThrow(TypeError)
  expect(() => limiter.withLimits(limits as never)).toThrow(message)
})

describe('what "keeps what it has used" means, per algorithm', () => {
  test('sliding window: the weighted count carries over a new limit', async () => {
    const { time, limiter } = setup({ limit: 10, window: '1m' }, 60_000 * 1000)
    await limiter.consume('k', 10)
    time.now += 60_000 + 30_000 // half-way through the next window: half of the 10 still weighs
    expect(await limiter.withLimits({ limit: 100 }).peek('k')).toMatchObject({ remaining: 95 })
  })

  test('sliding log: its entries are kept, as long as the limits that wrote them keep the key', async () => {
    const { time, limiter } = setup({ limit: 10, window: '1m', algorithm: 'sliding-log' })
    await limiter.consume('k', 4)
    time.now += 50_000
    await limiter.consume('k', 1) // the key now lives until this entry is a minute old
    time.now += 40_000
    expect((await limiter.peek('k')).remaining).toBe(9) // the 4 are 90 s old: outside a minute
    expect((await limiter.withLimits({ window: '2m' }).peek('k')).remaining).toBe(5) // inside two
  })

  test("fixed window: a count is kept while its window lines up with the new window's", async () => {
    const { limiter } = setup({ limit: 10, window: '1m', algorithm: 'fixed-window' }, 3_600_000 * 500)
    await limiter.consume('k', 4)
    // At the top of the hour, the minute and the hour start together: the count is the hour's too.
    expect((await limiter.withLimits({ limit: 100, window: '1h' }).peek('k')).remaining).toBe(96)
    // Ten seconds in, a 10-second window starts elsewhere: its count is its own.
    expect((await limiter.withLimits({ window: '10s' }).peek('k')).remaining).toBe(6)
  })

  test('token bucket: the tokens are kept under a new capacity, and refill at the new rate', async () => {
    const { time, limiter } = setup({ limit: 10, window: '10s', algorithm: 'token-bucket' })
    await limiter.consume('k', 8) // 2 tokens left
    const pro = limiter.withLimits({ limit: 100 }) // 100 per 10 s: 10 a second
    expect((await pro.peek('k')).remaining).toBe(2)
    time.now += 1000
    expect((await pro.peek('k')).remaining).toBe(12)
    expect((await limiter.peek('k')).remaining).toBe(3) // the small plan refills at 1 a second
    time.now += 5000
    await pro.consume('k') // 52 tokens, 51 after this
    // Back on the small plan, the bucket holds at most its capacity.
    expect((await limiter.peek('k')).remaining).toBe(10)
  })

  test('leaky bucket: the level (what was used) is kept under a new capacity', async () => {
    const { limiter } = setup({ limit: 10, window: '10s', algorithm: 'leaky-bucket' })
    await limiter.consume('k', 8)
    expect((await limiter.withLimits({ limit: 100 }).peek('k')).remaining).toBe(92)
    expect(await limiter.withLimits({ limit: 5 }).consume('k')).toMatchObject({ allowed: false, remaining: 0 })
  })

  test('a quota: the count of the period carries over', async () => {
    const { limiter } = setup({ name: 'daily', limit: 100, period: 'day', timeZone: 'Europe/Berlin' })
    await limiter.consume('k', 60)
    expect((await limiter.withLimits({ limit: 1000 }).consume('k')).remaining).toBe(939)
    expect(await limiter.withLimits({ limit: 50 }).consume('k')).toMatchObject({ allowed: false, remaining: 0 })
  })

  test('a variant has no queue', async () => {
    const { limiter } = setup({ limit: 10, window: '10s', algorithm: 'leaky-bucket' })
    await expect(limiter.withLimits({ limit: 20 }).schedule('k')).rejects.toThrow(/has no queue/)
    await expect(limiter.schedule('k')).resolves.toMatchObject({ allowed: true })
  })
})
