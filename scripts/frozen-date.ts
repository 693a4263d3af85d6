// For suites whose limiters count on the default MemoryStore, on the wall clock (`Date.now`): a window boundary
// between two requests of one test (a new minute, say) resets or slides the count, and a test that counts to its
// limit lets one more through (issue 24 item 9; the conformance table once admitted a 4th request at limit 3).

/** A UTC midnight: the start of every minute, hour and day window (2027-01-15T00:00:00Z). */
export const FROZEN_AT = 1_799_971_200_000

/**
 * Freezes `Date` at `at` for the calling file (call it before the file makes a limiter), and nothing else: timers,
 * `process.nextTick`, `setImmediate` and `performance` stay real, so servers, sockets and deadlines run as ever. Every
 * request of the file is then counted at one instant, as a test that counts to a limit means; none of these suites
 * waits for a window to pass.
 *
 * @example
 * freezeDate()
 * test('the third request is refused', async () => { ... })
 */
export function freezeDate(at: number = FROZEN_AT): void {
  // At once, not in a beforeAll: a store takes its clock when it is made, and a file may make its limiters at load.
  fakeDateOnly(at)
  afterAll(() => {
    jest.useRealTimers()
  })
}

/**
 * Fakes `Date` alone, at `now`, until `jest.useRealTimers()`: timers, `process.nextTick`, `setImmediate` and
 * `performance` stay real. {@link freezeDate} does this for a whole file; a suite that freezes per test calls it itself
 * and moves the instant with `jest.setSystemTime`.
 *
 * @example
 * beforeEach(() => fakeDateOnly(Date.UTC(2026, 11, 2, 9, 30)))
 * afterEach(() => jest.useRealTimers())
 */
export function fakeDateOnly(now: number): void {
  jest.useFakeTimers({
    now,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  })
}
