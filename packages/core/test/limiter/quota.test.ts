// Quotas: rules on calendar periods (a local day or month of any IANA zone), alone and stacked with rate rules.
import { createLimiter, type Decision, InvalidOptionError, type LimiterOptions, MemoryStore } from '@sluice/core'
import fc from 'fast-check'

const HOUR_MS = 3_600_000
const ms = (iso: string) => Date.parse(iso)

function setup(options: LimiterOptions, start: number) {
  const time = { now: start }
  const store = new MemoryStore({ clock: () => time.now })
  return { time, limiter: createLimiter({ ...options, store }) }
}

function optionAtFault(options: unknown): InvalidOptionError {
  try {
    createLimiter(options as LimiterOptions)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('expected createLimiter to throw')
}

describe('the worked quota: 500,000 a day in Berlin at a steady 10 requests a second', () => {
  // Monday 2 June 2025, 00:00 in Berlin (CEST, UTC+2): a 24-hour day.
  const midnight = ms('2025-06-01T22:00:00Z')
  const nextMidnight = ms('2025-06-02T22:00:00Z')

  test('runs out after 50,000 s (13:53:20), reporting what is left on the way; then waits for the next midnight', async () => {
    const { time, limiter } = setup(
      {
        rules: [
          { name: 'burst', limit: 1000, window: '1m' },
          { name: 'daily', limit: 500_000, period: 'day', timeZone: 'Europe/Berlin' },
        ],
      },
      midnight,
    )
    const hourly: number[] = []
    const miscounted: number[] = []
    let decision: Decision | undefined
    let i = 0
    for (; ; i++) {
      time.now = midnight + i * 100
      decision = await limiter.consume('api-key:42')
      if (!decision.allowed) break
      const daily = decision.rules?.[1] as Decision
      // Checked by hand: half a million expect() calls would take the test minutes.
      if (daily.remaining !== 500_000 - (i + 1)) miscounted.push(i)
      if ((i + 1) % 36_000 === 0) hourly.push(daily.remaining)
    }
    // The 500,001st request, at exactly 50,000 s: 13 h 53 min 20 s after midnight.
    expect(miscounted).toEqual([])
    expect(i).toBe(500_000)
    expect(time.now - midnight).toBe(50_000_000)
    expect(new Date(time.now).toISOString()).toBe('2025-06-02T11:53:20.000Z') // 13:53:20 in Berlin
    expect(hourly).toEqual([
      464_000, 428_000, 392_000, 356_000, 320_000, 284_000, 248_000, 212_000, 176_000, 140_000, 104_000, 68_000, 32_000,
    ])
    expect(decision).toMatchObject({
      allowed: false,
      rule: 'daily',
      limit: 500_000,
      remaining: 0,
      windowMs: 86_400_000,
      retryAfterMs: nextMidnight - time.now, // 36,400 s: to the next midnight in Berlin
      resetMs: nextMidnight - time.now,
    })
    expect(decision.retryAfterMs).toBe(36_400_000)
    // The burst rule was never what bound, and still admits.
    expect(decision.rules?.[0]).toMatchObject({ rule: 'burst', allowed: true })
    // Refused until the last millisecond of the day, admitted at midnight with a fresh quota.
    time.now = nextMidnight - 1
    expect(await limiter.consume('api-key:42')).toMatchObject({ allowed: false, retryAfterMs: 1 })
    time.now = nextMidnight
    const fresh = await limiter.consume('api-key:42')
    expect(fresh.allowed).toBe(true)
    expect(fresh.rules?.[1]).toMatchObject({ remaining: 499_999, resetMs: 86_400_000 })
  }, 60_000)
})

describe('options', () => {
  test.each<[string, unknown, string, RegExp]>([
    ['window with period', { limit: 5, period: 'day', window: '1d' }, 'window', /cannot be combined with `period`/],
    ['rate with period', { limit: 5, period: 'day', rate: 1 }, 'rate', /cannot be combined with `period`/],
    [
      'a bucket with period',
      { limit: 5, period: 'day', algorithm: 'token-bucket' },
      'algorithm',
      /'token-bucket' with `period`/,
    ],
    [
      'a sliding window with period',
      { limit: 5, period: 'month', algorithm: 'sliding-window' },
      'algorithm',
      /with `period`/,
    ],
    [
      'timeZone without period',
      { limit: 5, window: '1d', timeZone: 'UTC' },
      'timeZone',
      /applies only to a rule with a `period`/,
    ],
    ['an unknown period', { limit: 5, period: 'week' }, 'period', /must be 'day' or 'month'/],
    ['an unknown zone', { limit: 5, period: 'day', timeZone: 'Europe/Atlantis' }, 'timeZone', /not a time zone/],
    ['a bad block', { limit: 5, window: '1m', block: 'forever' }, 'block', /duration/],
    [
      'a stacked quota with window',
      {
        rules: [
          { name: 'a', limit: 5, window: '1m' },
          { name: 'b', limit: 9, period: 'day', window: '1d' },
        ],
      },
      'rules[1].window',
      /cannot be combined with `period`/,
    ],
    [
      'period beside rules',
      { rules: [{ name: 'a', limit: 5, window: '1m' }], period: 'day' },
      'period',
      /goes inside each rule/,
    ],
  ])('%s is an InvalidOptionError naming the option', (_, options, option, reason) => {
    const error = optionAtFault(options)
    expect(error.option).toBe(option)
    expect(error.message).toMatch(reason)
  })

  test("'fixed-window' may be said explicitly; a limiter's default algorithm does not reach its quota rules", () => {
    expect(createLimiter({ limit: 5, period: 'day', algorithm: 'fixed-window' }).rules[0]?.algorithm).toBe(
      'calendar-window',
    )
    const limiter = createLimiter({
      algorithm: 'token-bucket',
      rules: [
        { name: 'rate', limit: 5, window: '1s' },
        { name: 'daily', limit: 500, period: 'day' },
      ],
    })
    expect(limiter.rules.map((rule) => rule.algorithm)).toEqual(['token-bucket', 'calendar-window'])
  })

  test('a quota names its counter by its own code, and shows a nominal window: a day, or 30 days for a month', () => {
    const [daily, monthly] = createLimiter({
      rules: [
        { name: 'daily', limit: 500, period: 'day', timeZone: 'America/New_York' },
        { name: 'monthly', limit: 10_000_000, period: 'month' },
      ],
    }).rules
    expect(daily).toMatchObject({ keySpace: 'sluice:daily:cw:', windowMs: 86_400_000 })
    expect(daily?.calendar?.timeZone).toBe('America/New_York')
    // A monthly quota of ten million is exact: nothing multiplies it by the window.
    expect(monthly).toMatchObject({ keySpace: 'sluice:monthly:cw:', windowMs: 2_592_000_000, limit: 10_000_000 })
  })
})

describe('periods', () => {
  test('a monthly quota in Kathmandu (UTC+05:45) runs from local midnight on the 1st to the next 1st', async () => {
    const start = ms('2025-01-31T18:15:00Z') // 1 February 00:00 in Kathmandu
    const end = ms('2025-02-28T18:15:00Z') // 1 March 00:00
    const { time, limiter } = setup({ limit: 2, period: 'month', timeZone: 'Asia/Kathmandu' }, start - 1)
    expect(await limiter.consume('k', 2)).toMatchObject({ allowed: true, resetMs: 1 }) // January's last millisecond
    time.now = start
    expect(await limiter.consume('k', 2)).toMatchObject({ allowed: true, remaining: 0, resetMs: end - start })
    time.now = start + 20 * 24 * HOUR_MS
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: end - time.now })
    time.now = end
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 1 })
  })

  test('refunds give back to the current period only', async () => {
    const start = ms('2025-06-02T00:00:00Z')
    const { time, limiter } = setup({ limit: 3, period: 'day' }, start + 1000)
    await limiter.consume('k', 3)
    await limiter.refund('k', 2)
    expect((await limiter.peek('k')).remaining).toBe(2)
    await limiter.consume('k', 2)
    time.now = start + 24 * HOUR_MS + 5
    await limiter.refund('k', 3) // yesterday's count is gone: nothing to give back
    expect((await limiter.peek('k')).remaining).toBe(3)
  })
})

// The memory store alone (the Redis twin is held to these by test/redis/clock-steps and the differential): a count
// from a later period than the clock's moves back to the clock's period with its count, written back even by a peek
// or a refund, as the fixed window does.
describe('a Berlin day quota of 10 used up at 00:30, then a clock stepped back one hour across midnight', () => {
  // Friday 15 March 2024, 00:00 in Berlin (CET, UTC+1; both days around it last 24 hours).
  const midnight = ms('2024-03-14T23:00:00Z')
  const halfPastMidnight = midnight + 30 * 60_000

  async function exhaustThenStepBack() {
    const quota = setup({ limit: 10, period: 'day', timeZone: 'Europe/Berlin' }, halfPastMidnight)
    expect(await quota.limiter.consume('k', 10)).toMatchObject({ allowed: true, remaining: 0 })
    quota.time.now = halfPastMidnight - HOUR_MS // 23:30 on Thursday 14 March
    return quota
  }

  test("keeps the 10 in the clock's day: refused for the 30 minutes to midnight, then a fresh day", async () => {
    const { time, limiter } = await exhaustThenStepBack()
    expect(await limiter.peek('k')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 1_800_000 })
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 1_800_000 })
    time.now = midnight - 1
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1 })
    time.now = midnight
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 9, resetMs: 86_400_000 })
  })

  test('a peek writes the moved count: back at 00:30, the day counts from 0 (the 10 now belong to Thursday)', async () => {
    const { time, limiter } = await exhaustThenStepBack()
    expect((await limiter.peek('k')).allowed).toBe(false)
    time.now = halfPastMidnight
    expect(await limiter.consume('k', 10)).toMatchObject({ allowed: true, remaining: 0 })
  })

  test('a refund gives back to the moved count: 3 refunded at 23:30 admit 3 before midnight', async () => {
    const { time, limiter } = await exhaustThenStepBack()
    await limiter.refund('k', 3)
    expect(await limiter.consume('k', 3)).toMatchObject({ allowed: true, remaining: 0, resetMs: 1_800_000 })
    time.now += 60_000
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1_740_000 })
  })
})

test('property: a calendar window never admits more than L in one period, and admits L when asked enough', async () => {
  const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu']
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...zones),
      fc.constantFrom<'day' | 'month'>('day', 'month'),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
      fc.array(fc.record({ gapMs: fc.integer({ min: 0, max: 6 * HOUR_MS }), cost: fc.integer({ min: 1, max: 4 }) }), {
        minLength: 1,
        maxLength: 200,
      }),
      async (timeZone, period, limit, start, arrivals) => {
        const { time, limiter } = setup({ limit, period, timeZone }, start)
        const calendar = limiter.rules[0]?.calendar
        const admitted = new Map<number, number>()
        const refusedAfterRoom = new Set<number>()
        for (const { gapMs, cost } of arrivals) {
          time.now += gapMs
          const { startMs } = calendar?.at(time.now) ?? { startMs: Number.NaN }
          const d = await limiter.consume('k', Math.min(cost, limit))
          const used = admitted.get(startMs) ?? 0
          if (d.allowed) admitted.set(startMs, used + Math.min(cost, limit))
          // A refusal means the period really had no room for this cost.
          else if (used + Math.min(cost, limit) <= limit) refusedAfterRoom.add(startMs)
          expect(d.allowed ? 0 : d.retryAfterMs).toBe(d.allowed ? 0 : (calendar?.msUntilEnd(time.now) ?? -1))
        }
        for (const used of admitted.values()) expect(used).toBeLessThanOrEqual(limit)
        expect([...refusedAfterRoom]).toEqual([])
      },
    ),
    { numRuns: 300 },
  )
})
