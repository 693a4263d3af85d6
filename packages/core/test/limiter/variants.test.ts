import { createLimiter, MemoryStore } from '@sluice/core'
import { freezeDate } from '../../../../scripts/frozen-date'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

/** What calling `fn` throws: the message of a TypeError. */
function typeErrorOf(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError)
    return (error as Error).message
  }
  throw new Error('expected a TypeError')
}

const stacked = () =>
  createLimiter({
    algorithm: 'fixed-window',
    rules: [
      { name: 'minute', limit: 5, window: '1m' },
      { name: 'hour', limit: 50, window: '1h' },
    ],
  })

describe('withLimits: a plan is the same rules with other limits', () => {
  test('the limits a limiter already has give the limiter itself', () => {
    const single = createLimiter({ limit: 10, window: '1m' })
    expect(single.withLimits({ limit: 10 })).toBe(single)
    expect(single.withLimits({ limit: 10, window: 60_000 })).toBe(single)
    const two = stacked()
    expect(two.withLimits([undefined, undefined])).toBe(two)
    expect(two.withLimits([{ limit: 5 }, { window: '1h' }])).toBe(two)
  })

  test('each plan counts against its own limits, on the same counts', async () => {
    const limiter = stacked()
    const pro = limiter.withLimits([{ limit: 10 }, undefined])
    const team = limiter.withLimits([{ limit: 20 }, { limit: 500 }])
    expect((await pro.consume('k')).rules?.map((d) => d.remaining)).toEqual([9, 49])
    expect((await team.consume('k')).rules?.map((d) => d.remaining)).toEqual([18, 498])
    expect((await limiter.peek('k')).rules?.map((d) => d.remaining)).toEqual([3, 48])
    expect(limiter.withLimits([{ limit: 10 }, undefined])).toBe(pro)
  })

  test('a window algorithm may take another window; a bucket only its own', async () => {
    const windowed = createLimiter({ algorithm: 'sliding-log', limit: 5, window: '1m' })
    expect((await windowed.withLimits({ window: '2m' }).consume('k')).windowMs).toBe(120_000)
    const bucket = createLimiter({ algorithm: 'token-bucket', limit: 5, window: '10s' })
    expect(bucket.withLimits({ limit: 8, window: '10s' }).rules[0]).toMatchObject({ limit: 8, windowMs: 10_000 })
  })

  test.each([
    [{ algorithm: 'token-bucket', limit: 5, window: '10s' }, "a bucket's state counts in units of its rate"],
    [{ algorithm: 'leaky-bucket', limit: 5, window: '10s' }, "a bucket's state counts in units of its rate"],
    [{ limit: 5, period: 'day' }, 'a quota counts per calendar period'],
  ] as const)('%o cannot take another window, and says why', (options, why) => {
    const limiter = createLimiter(options)
    expect(typeErrorOf(() => limiter.withLimits({ window: '1h' }))).toContain(`option "window" cannot vary: ${why}`)
  })

  test('the 100 most recently used plans are kept built; the least recently used is dropped first', () => {
    const limiter = createLimiter({ limit: 10, window: '1m', store: new MemoryStore() })
    const first = limiter.withLimits({ limit: 1000 })
    const second = limiter.withLimits({ limit: 1001 })
    for (let limit = 1002; limit < 1100; limit++) limiter.withLimits({ limit })
    expect(limiter.withLimits({ limit: 1000 })).toBe(first) // 100 plans: all kept; this one is now the most recent
    limiter.withLimits({ limit: 2000 })
    expect(limiter.withLimits({ limit: 1000 })).toBe(first)
    expect(limiter.withLimits({ limit: 1001 })).not.toBe(second)
  })
})

describe('withLimits refuses limits of the wrong shape with a TypeError that says what it takes', () => {
  test.each([
    ['an array of one for two rules', [{ limit: 1 }], 'an array'],
    ['an array of three for two rules', [undefined, undefined, undefined], 'an array'],
    ['one object for two rules', { limit: 1 }, 'object'],
  ])('stacked rules: %s', (_, limits, got) => {
    expect(typeErrorOf(() => stacked().withLimits(limits as never))).toBe(
      `sluice: limits must be an array of 2 (one per rule, undefined to keep a rule's) (got ${got})`,
    )
  })

  test.each([
    ['an array of two', [{ limit: 1 }, { limit: 2 }], 'an array'],
    ['null', null, 'null'],
    ['a number', 5, '5'],
  ])('a single rule: %s', (_, limits, got) => {
    const limiter = createLimiter({ limit: 10, window: '1m' })
    expect(typeErrorOf(() => limiter.withLimits(limits as never))).toBe(
      `sluice: limits must be an object { limit, window } or an array of 1 (one per rule, undefined to keep a rule's) (got ${got})`,
    )
  })

  test.each([
    [[null, undefined], 'sluice: the limits of rule "minute" must be an object (got null)'],
    [[undefined, 7], 'sluice: the limits of rule "hour" must be an object (got 7)'],
    [[{ limit: 0 }, undefined], 'sluice: option "rules[0].limit" must be a positive whole number (got 0)'],
    [[undefined, { limit: 2.5 }], 'sluice: option "rules[1].limit" must be a positive whole number (got 2.5)'],
    // A string that reads as the rule's own limit is refused too, not taken for the limiter itself.
    [[undefined, { limit: '50' }], 'sluice: option "rules[1].limit" must be a positive whole number (got "50")'],
  ])('a rule of a stack: %o', (limits, message) => {
    expect(typeErrorOf(() => stacked().withLimits(limits as never))).toBe(message)
  })

  test('a single rule names its option without a path', () => {
    const limiter = createLimiter({ limit: 10, window: '1m' })
    expect(typeErrorOf(() => limiter.withLimits({ limit: -1 }))).toBe(
      'sluice: option "limit" must be a positive whole number (got -1)',
    )
  })
})
