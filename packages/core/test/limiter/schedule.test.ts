import { createLimiter, MemoryStore } from '@sluice/core'

const DAY_MS = 86_400_000

describe('schedule', () => {
  afterEach(() => {
    jest.useRealTimers()
  })

  test('schedule on a 30-day queue waited 3 ms', async () => {
    // A timer longer than 2^31 - 1 ms (24.8 days) fires at once in Node: a long wait must be a chain of timers.
    jest.useFakeTimers({ now: 1_700_000_000_000 })
    // A daily sweep: the default one, every minute, would tick 43 200 times on the fake clock.
    const store = new MemoryStore({ sweepIntervalMs: DAY_MS })
    const limiter = createLimiter({ algorithm: 'leaky-bucket', limit: 1, window: '30d', store })
    let departed = false
    const waiting = limiter.schedule('monthly-report').then((decision) => {
      departed = true
      return decision
    })
    await jest.advanceTimersByTimeAsync(3)
    expect(departed).toBe(false)
    await jest.advanceTimersByTimeAsync(30 * DAY_MS - 4)
    expect(departed).toBe(false)
    await jest.advanceTimersByTimeAsync(1)
    expect(departed).toBe(true)
    // The first departure from an empty queue is one interval, 1 / r = 30 days, after the arrival.
    expect((await waiting).delayMs).toBe(30 * DAY_MS)
  })

  test('an abort during a chained wait stops it at once', async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 })
    const store = new MemoryStore({ sweepIntervalMs: DAY_MS })
    const limiter = createLimiter({ algorithm: 'leaky-bucket', limit: 1, window: '60d', store })
    const controller = new AbortController()
    const waiting = limiter.schedule('yearly', 1, { signal: controller.signal })
    const outcome = waiting.then(
      () => 'departed',
      (error: unknown) => error,
    )
    await jest.advanceTimersByTimeAsync(40 * DAY_MS)
    controller.abort(new Error('caller gave up'))
    await expect(outcome).resolves.toEqual(new Error('caller gave up'))
    store.clear() // stops the store's sweep timer: what is left is the wait's, if it was not cleared
    expect(jest.getTimerCount()).toBe(0)
  })
})
