// The adaptive in-flight ceiling, one window at a time: every figure below is the arithmetic the ceiling promises
// (windows of at least 20 samples and 20 previous averages of slot time, averages weighted by latency, slow start, a
// cut to 90%, +1 after the first cut, a baseline drifting 1% a window).
import { InvalidOptionError } from '@sluice/core'
import { AdaptiveLimit, type AdaptiveLimitOptions } from '../../src/protect/adaptive-limit'

const previousWindowMs = new WeakMap<AdaptiveLimit, number>()

/**
 * One complete window at `latencyMs`: max(ceiling, 20) samples, and at least 20 times the previous window's latency
 * in slot time. `reached` when the ceiling bound during it.
 */
function window(adaptive: AdaptiveLimit, latencyMs: number, reached: boolean): number {
  if (reached) adaptive.reached()
  const previousMs = previousWindowMs.get(adaptive) ?? 0
  const samples = Math.max(adaptive.limit, 20, Math.ceil((20 * previousMs) / latencyMs - 1e-9))
  for (let i = 0; i < samples; i++) adaptive.sample(latencyMs)
  previousWindowMs.set(adaptive, latencyMs)
  return adaptive.limit
}

describe('the adaptive ceiling', () => {
  test.each<[string, AdaptiveLimitOptions | true, number, number]>([
    ['the defaults', true, 64, 4],
    ['a minInFlight above 4', { minInFlight: 10 }, 64, 10],
    ['a maxInFlight below 4', true, 2, 2],
  ])('starts at 4, or minInFlight if higher, never above maxInFlight: %s', (_name, options, maxInFlight, start) => {
    expect(new AdaptiveLimit(options, maxInFlight).limit).toBe(start)
  })

  test('judges windows of at least 20 samples: nothing moves before the 20th', () => {
    const adaptive = new AdaptiveLimit(true, 64)
    adaptive.reached()
    for (let i = 0; i < 19; i++) adaptive.sample(10)
    expect(adaptive.limit).toBe(4)
    adaptive.sample(10)
    expect(adaptive.limit).toBe(8)
  })

  test('a window holds one sample per slot once the ceiling is above 20', () => {
    const adaptive = new AdaptiveLimit(true, 64)
    expect([10, 10, 10].map(() => window(adaptive, 10, true))).toEqual([8, 16, 32])
    adaptive.reached()
    for (let i = 0; i < 31; i++) adaptive.sample(10)
    expect(adaptive.limit).toBe(32)
    adaptive.sample(10)
    expect(adaptive.limit).toBe(64)
  })

  test('doubles while latency holds (slow start), cuts to 90% when it rises, then grows by one', () => {
    const adaptive = new AdaptiveLimit(true, 100)
    expect([10, 10, 10].map(() => window(adaptive, 10, true))).toEqual([8, 16, 32])
    // 20 ms is above 1.5 x the 10 ms baseline: floor(32 x 0.9).
    expect(window(adaptive, 20, true)).toBe(28)
    expect([10, 10].map(() => window(adaptive, 10, true))).toEqual([29, 30])
  })

  test('cheap requests cannot poison the baseline: a burst of them closes no window, and weighs by its slot time', () => {
    const adaptive = new AdaptiveLimit(true, 64)
    expect([10, 10].map(() => window(adaptive, 10, true))).toEqual([8, 16])
    // 200 requests of 0.2 ms (404s) hold 40 ms of slot time, a fifth of what a window needs after one of 10 ms.
    // Before, they made ten windows of their own, a baseline of 0.2 ms, and a cut of every ordinary window after.
    adaptive.reached()
    for (let i = 0; i < 200; i++) adaptive.sample(0.2)
    expect(adaptive.limit).toBe(16)
    // The window they end up in weighs them 0.2 ms each against 10 ms: it averages 8 ms, and 10 ms windows are
    // within 1.5 x that: the ceiling keeps growing.
    expect([10, 10].map(() => window(adaptive, 10, true))).toEqual([32, 64])
  })

  test('grows only in a window where the ceiling was reached, and the reach counts for that window alone', () => {
    const adaptive = new AdaptiveLimit(true, 64)
    expect(window(adaptive, 10, false)).toBe(4)
    expect(window(adaptive, 10, true)).toBe(8)
    expect(window(adaptive, 10, false)).toBe(8)
  })

  test('a latency of exactly tolerance x baseline is within tolerance', () => {
    const adaptive = new AdaptiveLimit({ tolerance: 1.5 }, 64)
    expect(window(adaptive, 10, true)).toBe(8)
    expect(window(adaptive, 15, true)).toBe(16)
  })

  test('never goes below minInFlight; still slow there, it learns the slower latency as the new baseline', () => {
    const adaptive = new AdaptiveLimit({ minInFlight: 4 }, 64)
    expect(window(adaptive, 10, true)).toBe(8)
    expect([100, 100, 100, 100, 100].map(() => window(adaptive, 100, false))).toEqual([7, 6, 5, 4, 4])
    // 100 ms is now the baseline, and the ceiling starts over with slow start.
    expect([100, 100].map(() => window(adaptive, 100, true))).toEqual([8, 16])
  })

  test('the baseline drifts up 1% a window while the ceiling does not bind, so a slower service is learnt', () => {
    const adaptive = new AdaptiveLimit({ tolerance: 1 }, 64)
    expect(window(adaptive, 10, true)).toBe(8)
    // Baseline 10 ms: 10.2 ms is above it, even after one 1% drift (10.1 ms): cut. The next window's baseline has
    // drifted to 10.2 ms: no cut.
    expect(window(adaptive, 10.2, false)).toBe(7)
    expect(window(adaptive, 10.2, false)).toBe(7)
    expect(window(adaptive, 10.2, true)).toBe(8)
  })

  test('the baseline does not drift in a window where the ceiling bound (its latency includes queueing)', () => {
    const bound = new AdaptiveLimit({ tolerance: 1 }, 64)
    const free = new AdaptiveLimit({ tolerance: 1 }, 64)
    for (const adaptive of [bound, free]) expect(window(adaptive, 10, true)).toBe(8)
    expect(window(bound, 10.05, true)).toBe(7)
    expect(window(free, 10.05, false)).toBe(8)
  })
})

describe('adaptive options: invalid values throw naming the option', () => {
  function refusal(options: unknown, maxInFlight = 8): { option: string; message: string } {
    try {
      new AdaptiveLimit(options as AdaptiveLimitOptions, maxInFlight)
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionError)
      return { option: (error as InvalidOptionError).option, message: (error as Error).message }
    }
    throw new Error('expected the options to be refused')
  }

  test.each<[string, unknown, string, string]>([
    ['an array', [], 'adaptive', 'must be an object (got an array)'],
    ['minInFlight 0', { minInFlight: 0 }, 'adaptive.minInFlight', 'must be a positive whole number (got 0)'],
    ['minInFlight above maxInFlight', { minInFlight: 9 }, 'adaptive.minInFlight', 'must not exceed maxInFlight (8)'],
    ['tolerance "2"', { tolerance: '2' }, 'adaptive.tolerance', 'must be a number of at least 1 (got "2")'],
    ['tolerance NaN', { tolerance: Number.NaN }, 'adaptive.tolerance', 'must be a number of at least 1 (got NaN)'],
    ['tolerance Infinity', { tolerance: Number.POSITIVE_INFINITY }, 'adaptive.tolerance', 'at least 1'],
    ['tolerance 0.99', { tolerance: 0.99 }, 'adaptive.tolerance', 'must be a number of at least 1 (got 0.99)'],
    ['an unknown option', { mode: 'vegas' }, 'adaptive.mode', 'is not an option of adaptive'],
  ])('%s', (_name, options, option, message) => {
    const refused = refusal(options)
    expect(refused.option).toBe(option)
    expect(refused.message).toContain(message)
  })

  test('the edges are allowed: minInFlight equal to maxInFlight, tolerance 1, both options given', () => {
    expect(new AdaptiveLimit({ minInFlight: 8, tolerance: 1 }, 8).limit).toBe(8)
  })
})
