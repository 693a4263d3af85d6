import { createLimiter, type Decision, MemoryStore, type RateLimitError } from '@sluice/core'
import { leakyQueue, leakyQueueRefund, type SlidingLogState, slidingLog, slidingLogRefund } from '../../src/algorithms'

/** A limiter on a memory store whose clock the test moves. */
function setup(options: Parameters<typeof createLimiter>[0], start = 0) {
  const time = { now: start }
  const store = new MemoryStore({ clock: () => time.now })
  const limiter = createLimiter({ ...options, store })
  return { time, limiter }
}

async function consumeMany(limiter: ReturnType<typeof createLimiter>, key: string, count: number, cost = 1) {
  const decisions: Decision[] = []
  for (let i = 0; i < count; i++) decisions.push(await limiter.consume(key, cost))
  return decisions
}

describe('fixed window', () => {
  test('admits 2L within a span much shorter than W around a window boundary (the double burst)', async () => {
    const W = 60_000
    const L = 10
    const { time, limiter } = setup({ algorithm: 'fixed-window', limit: L, window: W }, 10 * W - 50)
    const before = await consumeMany(limiter, 'k', L + 2)
    time.now = 10 * W + 50 // 100 ms later, in the next window
    const after = await consumeMany(limiter, 'k', L + 2)
    const admitted = [...before, ...after].filter((d) => d.allowed).length
    expect(admitted).toBe(2 * L)
    expect(before[L]?.allowed).toBe(false)
    expect(before[L]?.retryAfterMs).toBe(50) // to the window's end
    expect(after[L]?.retryAfterMs).toBe(W - 50)
  })

  test('rejected requests are not counted', async () => {
    const { time, limiter } = setup({ algorithm: 'fixed-window', limit: 2, window: 1000 })
    await consumeMany(limiter, 'k', 5)
    time.now = 1000
    const d = await limiter.consume('k')
    expect(d).toMatchObject({ allowed: true, remaining: 1 })
  })
})

describe('sliding log', () => {
  test('an entry exactly W old has expired: the window is (t - W, t]', async () => {
    const { time, limiter } = setup({ algorithm: 'sliding-log', limit: 2, window: '1s' })
    await limiter.consume('k')
    time.now = 500
    await limiter.consume('k')
    time.now = 999
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 1 })
    time.now = 1000 // the entry of t = 0 is exactly 1 s old, the one of t = 500 still counts
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 0 })
    time.now = 1499
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1 })
  })

  test('a hot key keeps one entry per millisecond, not one per request (its log grew by every admitted call)', () => {
    const rule = createLimiter({ algorithm: 'sliding-log', limit: 1_000_000, window: '1d' }).rules[0]!
    let state: SlidingLogState | undefined
    for (let now = 1000; now < 1010; now++) {
      for (let i = 0; i < 100; i++) state = slidingLog(state, now, 1, rule, true).state
    }
    // Nine earlier milliseconds in the shared arrays, the newest in the state itself.
    expect(state!.end - state!.start).toBe(9)
    expect([state!.newestTime, state!.newestCost, state!.used]).toEqual([1009, 100, 1000])
    expect(slidingLog(state, 1000 + 86_400_000, 1, rule, false).remaining).toBe(1_000_000 - 900)
  })

  test('a clock stepped back leaves the key at its own time, so the oldest entry frees its room one window after it was seen', () => {
    const rule = createLimiter({ algorithm: 'sliding-log', limit: 5, window: '1s' }).rules[0]!
    const first = slidingLog(undefined, 1000, 2, rule, true).state
    const full = slidingLog(first, 1500, 3, rule, true).state
    // The clock reads 500 now: the key decides as of 1500, its newest entry, and is 1000 ms ahead of the clock from
    // then on, so the oldest entry (1000) frees its 2 units when the clock reads 1000. Decided by the clock instead,
    // the oldest would keep the client waiting until the clock reads 2000 (1500 ms).
    const step = slidingLog(full, 500, 1, rule, true)
    expect(step).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 500, resetMs: 1000, aheadMs: 1000 })
    expect(step.state).toMatchObject({ newestTime: 1500, newestCost: 3, used: 5, offsetMs: 1000 })
    expect(slidingLog(step.state, 1000, 2, rule, true)).toMatchObject({ allowed: true, remaining: 0 })
  })
})

describe('sliding window counter', () => {
  test('limit 100, W 60 s, prev 80, cur 30, 15 s in: the estimate is 90 and the request is admitted', async () => {
    const W = 60_000
    const { time, limiter } = setup({ algorithm: 'sliding-window', limit: 100, window: '60s' })
    time.now = 0
    await limiter.consume('k', 80) // previous window: 80
    time.now = W + 15_000
    expect((await limiter.consume('k', 30)).allowed).toBe(true) // current window: 30
    const peeked = await limiter.peek('k')
    // floor(80 * 45 / 60) + 30 = 60 + 30 = 90 used, so 10 remain.
    expect(peeked.remaining).toBe(10)
    const d = await limiter.consume('k')
    expect(d.allowed).toBe(true)
    expect(d.remaining).toBe(9)
  })

  test('retry-after comes from the formula: the first millisecond the estimate lets the request through', async () => {
    const W = 1000
    const { time, limiter } = setup({ algorithm: 'sliding-window', limit: 10, window: W })
    await limiter.consume('k', 10)
    time.now = W + 100 // prev 10, cur 0: estimate floor(10 * 900 / 1000) = 9
    const rejected = await limiter.consume('k', 3)
    expect(rejected.allowed).toBe(false)
    // needs floor(10 * (W - e) / W) <= 7, that is 10 * (W - e) < 8000, e >= 201: 101 ms from now.
    expect(rejected.retryAfterMs).toBe(101)
    time.now += rejected.retryAfterMs - 1
    expect((await limiter.consume('k', 3)).allowed).toBe(false)
    time.now += 1
    expect((await limiter.consume('k', 3)).allowed).toBe(true)
  })
})

describe('token bucket', () => {
  test('with r = 0.5/s one whole token is earned in 2 s, and the wait is (1 - s) / r', async () => {
    const { time, limiter } = setup({ algorithm: 'token-bucket', limit: 1, rate: 0.5 })
    expect((await limiter.consume('k')).allowed).toBe(true)
    const empty = await limiter.consume('k')
    expect(empty).toMatchObject({ allowed: false, retryAfterMs: 2000 })
    time.now = 500 // s = 0.25 token: wait (1 - 0.25) / 0.5 = 1.5 s
    expect((await limiter.consume('k')).retryAfterMs).toBe(1500)
    time.now = 1999
    expect((await limiter.consume('k')).allowed).toBe(false)
    time.now = 2000
    expect((await limiter.consume('k')).allowed).toBe(true)
  })

  test('weighted cost: an export costing 25 waits while reads costing 1 keep passing', async () => {
    const { time, limiter } = setup({ algorithm: 'token-bucket', limit: 30, window: '30s' }) // 1 token per second
    const reads = await consumeMany(limiter, 'k', 10)
    expect(reads.every((d) => d.allowed)).toBe(true)
    const exportRequest = await limiter.consume('k', 25) // 20 tokens left: needs 5 more
    expect(exportRequest).toMatchObject({ allowed: false, retryAfterMs: 5000, remaining: 20 })
    const moreReads = await consumeMany(limiter, 'k', 5)
    expect(moreReads.every((d) => d.allowed)).toBe(true)
    expect((await limiter.consume('k', 25)).retryAfterMs).toBe(10_000)
    time.now = 10_000
    expect((await limiter.consume('k', 25)).allowed).toBe(true)
  })
})

describe('leaky bucket as a queue', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }))
  afterEach(() => jest.useRealTimers())

  test('9 arrivals at once, 6 slots, one departure every 0.5 s: departures at 0.5 ... 3.0 s and 3 dropped', async () => {
    const limiter = createLimiter({ algorithm: 'leaky-bucket', limit: 6, window: '3s', store: new MemoryStore() })
    const departures: number[] = []
    const dropped: RateLimitError[] = []
    const pending = Array.from({ length: 9 }, () =>
      limiter.schedule('sms').then(
        () => departures.push(Date.now()),
        (error: RateLimitError) => dropped.push(error),
      ),
    )
    await jest.advanceTimersByTimeAsync(0)
    expect(dropped).toHaveLength(3) // at once, before anything departs
    expect(dropped[0]?.decision.retryAfterMs).toBe(500)
    await jest.advanceTimersByTimeAsync(3000)
    await Promise.all(pending)
    expect(departures).toEqual([500, 1000, 1500, 2000, 2500, 3000])
  })

  test('departures 1/3 s apart keep their fractions: each leaves at the first whole ms at or after its time', async () => {
    const limiter = createLimiter({ algorithm: 'leaky-bucket', limit: 6, window: '2s', store: new MemoryStore() })
    const departures: number[] = []
    const dropped: RateLimitError[] = []
    const arrive = () =>
      limiter.schedule('sms').then(
        () => departures.push(Date.now()),
        (error: RateLimitError) => dropped.push(error),
      )
    const pending = Array.from({ length: 7 }, arrive)
    await jest.advanceTimersByTimeAsync(0)
    // Full: the next place frees when the first request leaves, at 333.3 ms.
    expect(dropped.map((error) => error.decision.retryAfterMs)).toEqual([334])
    await jest.advanceTimersByTimeAsync(1999)
    // One arrives while the last departure (2000 ms exactly) is 1 ms away: it leaves 333.3 ms after that one.
    pending.push(arrive())
    await jest.advanceTimersByTimeAsync(1000)
    await Promise.all(pending)
    expect(departures).toEqual([334, 667, 1000, 1334, 1667, 2000, 2334])
  })

  test('an abort stops the wait with the abort reason', async () => {
    const limiter = createLimiter({ algorithm: 'leaky-bucket', limit: 2, window: '2s', store: new MemoryStore() })
    const controller = new AbortController()
    const waiting = limiter.schedule('k', 1, { signal: controller.signal })
    await jest.advanceTimersByTimeAsync(100)
    controller.abort(new Error('caller gave up'))
    await expect(waiting).rejects.toThrow('caller gave up')
  })
})

describe('costs that can never fit', () => {
  test.each(['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket'] as const)(
    '%s: a cost above the limit is never admittable, has no retry time and consumes nothing',
    async (algorithm) => {
      const { limiter } = setup({ algorithm, limit: 10, window: '1s' })
      const d = await limiter.consume('k', 11)
      expect(d).toMatchObject({ allowed: false, costExceedsCapacity: true, retryAfterMs: Number.POSITIVE_INFINITY })
      expect(d.remaining).toBe(10)
      expect((await limiter.peek('k')).remaining).toBe(10)
    },
  )
})

describe('stacked rules', () => {
  test('a request must pass every rule, is charged to all or none, and the decision names the binding rule', async () => {
    const { limiter } = setup({
      rules: [
        { name: 'user', limit: 5, window: '1m' },
        { name: 'tenant', limit: 3, window: '1m' },
      ],
    })
    const admitted = await consumeMany(limiter, 'x', 3)
    expect(admitted.map((d) => d.rule)).toEqual(['tenant', 'tenant', 'tenant'])
    const rejected = await limiter.consume(['user:1', 'x'])
    expect(rejected).toMatchObject({ allowed: false, rule: 'tenant' })
    expect(rejected.rules?.map((d) => [d.rule, d.allowed, d.remaining])).toEqual([
      ['user', true, 5],
      ['tenant', false, 0],
    ])
    expect((await limiter.peek(['user:1', 'other'])).rules?.[0]?.remaining).toBe(5)
  })

  test.each([
    ['burst', 'hour'],
    ['hour', 'burst'],
  ])('when %s and %s both reject, the decision (and so Retry-After) is the longest wait', async (...names) => {
    const { limiter } = setup({
      algorithm: 'fixed-window',
      rules: names.map((name) => ({ name, limit: 1, window: name === 'hour' ? 60_000 : 10_000 })),
    })
    expect((await limiter.consume(['k', 'k'])).allowed).toBe(true)
    const rejected = await limiter.consume(['k', 'k'])
    expect(rejected).toMatchObject({ allowed: false, rule: 'hour', retryAfterMs: 60_000 })
    expect(rejected.rules?.map((d) => [d.rule, d.retryAfterMs])).toEqual(
      names.map((name) => [name, name === 'hour' ? 60_000 : 10_000]),
    )
  })
})

describe('refund', () => {
  test.each(['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket'] as const)(
    '%s: a refunded request no longer counts',
    async (algorithm) => {
      const { limiter } = setup({ algorithm, limit: 3, window: '1s' })
      await consumeMany(limiter, 'k', 3)
      expect((await limiter.consume('k')).allowed).toBe(false)
      await limiter.refund('k', 1)
      expect((await limiter.consume('k')).allowed).toBe(true)
      expect((await limiter.consume('k')).allowed).toBe(false)
    },
  )
})

describe('reset', () => {
  test('forgets a key under every rule, and leaves other keys alone', async () => {
    const { limiter } = setup({
      algorithm: 'fixed-window',
      rules: [
        { name: 'user', limit: 1, window: '1m' },
        { name: 'tenant', limit: 3, window: '1m' },
      ],
    })
    await limiter.consume(['u1', 't1'])
    await limiter.consume(['u2', 't2'])
    expect((await limiter.consume(['u1', 't1'])).allowed).toBe(false)
    await limiter.reset(['u1', 't1'])
    const after = await limiter.consume(['u1', 't1'])
    expect(after.rules?.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 0],
      [true, 2],
    ])
    expect((await limiter.peek(['u2', 't2'])).rules?.map((d) => d.remaining)).toEqual([0, 2])
  })

  test("gives back a key's places in the queue", async () => {
    const { limiter } = setup({ algorithm: 'leaky-bucket', limit: 1, window: '1s' })
    expect(await limiter.enqueue('k')).toMatchObject({ allowed: true, delayMs: 1000 })
    expect(await limiter.enqueue('k')).toMatchObject({ allowed: false, retryAfterMs: 1000 })
    await limiter.reset('k')
    expect(await limiter.enqueue('k')).toMatchObject({ allowed: true, delayMs: 1000 })
  })
})

describe('leaky queue refund', () => {
  // r = 2 per second: one departure every 500 ms.
  const rule = createLimiter({ algorithm: 'leaky-bucket', limit: 4, window: '2s' }).rules[0]
  if (rule === undefined) throw new Error('no rule')
  const queued = (count: number) => {
    let state: unknown
    for (let i = 0; i < count; i++) state = leakyQueue(state as never, 0, 1, rule, true).state
    return state as Parameters<typeof leakyQueueRefund>[0]
  }

  test('moves the last departure earlier by the interval of the refunded cost', () => {
    // Three queued at t = 0 depart at 500, 1000 and 1500; a refund of one at t = 200 leaves 1000 as the last.
    expect(leakyQueueRefund(queued(3), 200, 1, rule)).toMatchObject({ allowed: true, remaining: 2, resetMs: 800 })
    expect(leakyQueueRefund(queued(3), 200, 1, rule).state).toEqual({
      departureMs: 1000,
      departureFraction: 0,
      offsetMs: 0,
    })
  })

  test('never moves it before now: a refund larger than the backlog empties the queue', () => {
    expect(leakyQueueRefund(queued(2), 600, 2, rule)).toMatchObject({ allowed: true, remaining: 4, resetMs: 0 })
    expect(leakyQueueRefund(queued(2), 600, 2, rule).state).toBeUndefined()
    expect(leakyQueueRefund(undefined, 600, 1, rule)).toMatchObject({ remaining: 4, resetMs: 0 })
  })
})

describe('edges the mutation run found untested', () => {
  const log = createLimiter({ algorithm: 'sliding-log', limit: 10, window: '1s' }).rules[0]!

  test('sliding log: a cost equal to the limit fits a new key and an emptied one; one above never fits', () => {
    expect(slidingLog(undefined, 0, 10, log, true)).toMatchObject({ allowed: true, remaining: 0 })
    expect(slidingLog(undefined, 0, 11, log, true)).toMatchObject({ allowed: false, retryAfterMs: Infinity })
    const used = slidingLog(undefined, 0, 4, log, true).state
    // On a key in use: the full limit waits for the newest entry to expire; more than the limit, forever.
    expect(slidingLog(used, 300, 10, log, true)).toMatchObject({ allowed: false, remaining: 6, retryAfterMs: 700 })
    expect(slidingLog(used, 300, 11, log, true)).toMatchObject({ allowed: false, retryAfterMs: Infinity })
  })

  test('sliding log: a refund smaller than the newest entry leaves the rest of it, which frees only that much on expiry', () => {
    let state = slidingLog(undefined, 0, 3, log, true).state
    state = slidingLog(state, 500, 2, log, true).state
    const refunded = slidingLogRefund(state, 600, 1, log) // the entry at 500 keeps 1 of its 2
    expect(refunded.remaining).toBe(6)
    state = slidingLog(refunded.state, 700, 1, log, true).state
    // At 1501 the entries of 0 (3) and 500 (now 1) have expired; the one at 700 is left.
    expect(slidingLog(state, 1501, 1, log, false).remaining).toBe(9)
    // At 1000 only the entry of 0 has: 1 + 1 used.
    expect(slidingLog(state, 1000, 1, log, false).remaining).toBe(8)
  })

  const queue = createLimiter({ algorithm: 'leaky-bucket', limit: 6, window: '3s' }).rules[0]!

  test('leaky queue: a clock stepped back finds the queue as full as it was, not as long as the step', () => {
    let state: Parameters<typeof leakyQueue>[0]
    for (let i = 0; i < 6; i++) state = leakyQueue(state, 10_000, 1, queue, true).state // departs at 13,000
    // The clock reads 5,000: 8 s of backlog by the stored departure. The key decides as of 10,000 (it was written no
    // earlier), 5 s ahead of the clock from then on: a full queue of 3 s.
    const full = leakyQueue(state, 5_000, 1, queue, true)
    expect(full).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 500 })
    // The store writes the new offset.
    expect(full.state).toEqual({ departureMs: 13_000, departureFraction: 0, offsetMs: 5_000 })
    expect(leakyQueue(full.state, 5_500, 1, queue, true)).toMatchObject({ allowed: true, remaining: 0, delayMs: 3000 })
    // A refund after the step gives back one place of the full queue.
    expect(leakyQueueRefund(state, 5_000, 1, queue)).toMatchObject({ allowed: true, remaining: 1, resetMs: 2500 })
  })

  test('leaky queue: a departure due this millisecond with a fraction of one left still holds that fraction', () => {
    const thirds = createLimiter({ algorithm: 'leaky-bucket', limit: 3, window: '1s' }).rules[0]!
    const one = leakyQueue(undefined, 0, 1, thirds, true) // departs at 333 1/3
    expect(one.delayMs).toBe(334)
    expect(leakyQueue(one.state, 333, 1, thirds, false)).toMatchObject({ remaining: 2, resetMs: 1 })
    expect(leakyQueue(one.state, 334, 1, thirds, false)).toMatchObject({ remaining: 3, resetMs: 0 })
  })
})
