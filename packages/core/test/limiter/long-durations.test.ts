// Durations longer than a Node timer holds (2^31 - 1 ms, about 24.8 days). Such a timer fires after 1 ms, and one
// re-armed for the same instant becomes a 1 ms loop: a maxWait of 30 days shed nothing and spun, a lease of 90 days
// renewed hundreds of times a second. A long wait is a chain of timers; an interval that long is refused.
import {
  createConcurrencyLimiter,
  createShedder,
  InvalidOptionError,
  MemoryLeaseStore,
  MemoryStore,
} from '@sluice/core'

const DAY_MS = 86_400_000

/** Counts the timers set through the global setTimeout while `run` advances the fake clock. */
function timersSetDuring(run: () => void): number {
  const spy = jest.spyOn(global, 'setTimeout')
  try {
    run()
    return spy.mock.calls.length
  } finally {
    spy.mockRestore()
  }
}

beforeEach(() => {
  jest.useFakeTimers()
})
afterEach(() => {
  jest.useRealTimers()
})

test('a maxWait of 30 days sets no timer loop: the waiter is shed at its deadline, 30 days on, and not before', () => {
  const shedder = createShedder({ maxInFlight: 1, queue: 1, maxWait: '30d', queueInterval: '30d' })
  const running = shedder.admit()
  const waiter = shedder.admit()
  expect(waiter.state).toBe('waiting')
  // Before the fix the deadline's timer fired after 1 ms and was set again: a thousand timers in this second.
  expect(timersSetDuring(() => jest.advanceTimersByTime(1000))).toBe(0)
  jest.advanceTimersByTime(30 * DAY_MS - 1001)
  expect(waiter.state).toBe('waiting')
  jest.advanceTimersByTime(1)
  expect(waiter.state).toBe('shed')
  expect(waiter.reason).toBe('deadline')
  running.release()
})

test('a lease of 90 days is renewed every 30 days, not every millisecond', async () => {
  const store = new MemoryLeaseStore()
  const renew = jest.spyOn(store, 'renew')
  const limiter = createConcurrencyLimiter({ limit: 1, lease: '90d', store })
  const slot = await limiter.acquire('tenant:acme')
  expect(slot.allowed).toBe(true)
  expect(timersSetDuring(() => jest.advanceTimersByTime(1000))).toBe(0)
  expect(renew).not.toHaveBeenCalled()
  jest.advanceTimersByTime(30 * DAY_MS - 1000)
  expect(renew).toHaveBeenCalledTimes(1)
  await slot.release()
})

test.each([['sweepIntervalMs', () => new MemoryStore({ sweepIntervalMs: 30 * DAY_MS })]])(
  'an interval longer than a timer holds is refused at construction, naming it: %s',
  (option, build) => {
    expect(build).toThrow(InvalidOptionError)
    expect(build).toThrow(
      `sluice: option "${option}" must be at most 2147483647 milliseconds, about 24.8 days: the longest a timer waits (got ${30 * DAY_MS})`,
    )
  },
)

test('the longest interval a timer holds is accepted', () => {
  expect(() => new MemoryStore({ sweepIntervalMs: 2 ** 31 - 1 })).not.toThrow()
})
