// A retry budget and a throttle keep state per origin. Without a bound, 50,000 origins within one window (the
// throttle's is two minutes) held 336 MiB; now each keeps at most `maxKeys` (1000 by default), least recent first out.
import { ClientOptionError, createAdaptiveThrottle, createRetryBudget } from '../src'

const ORIGINS = 50_000

describe('state per origin', () => {
  test('a retry budget used for 50,000 origins within a second keeps state for 1000, the most recent', () => {
    const now = 0
    const budget = createRetryBudget({ clock: () => now })
    for (let i = 0; i < ORIGINS; i++) budget.recordRequest(`https://host-${i}.example`)
    expect(budget.size).toBe(1000)
    // The most recent origin kept its first attempt: with 19 more, 10% of 20 is two retries (of 19 alone, one).
    const recent = `https://host-${ORIGINS - 1}.example`
    for (let i = 0; i < 19; i++) budget.recordRequest(recent)
    expect([budget.tryRetry(recent), budget.tryRetry(recent), budget.tryRetry(recent)]).toEqual([true, true, false])
    expect(budget.size).toBe(1000)
  })

  test('a throttle used for 50,000 origins within its window keeps state for 1000', () => {
    let now = 0
    const throttle = createAdaptiveThrottle({ clock: () => now, random: () => 0 })
    for (let i = 0; i < ORIGINS; i++) {
      throttle.record(`https://host-${i}.example`, false)
      now += 1
    }
    expect(throttle.size).toBe(1000)
    // The most recent origin still counts its refusal: one request sent, none accepted.
    expect(throttle.refusalProbability(`https://host-${ORIGINS - 1}.example`)).toBe(0.5)
  })

  test('maxKeys sets the bound', () => {
    const budget = createRetryBudget({ maxKeys: 10, clock: () => 0 })
    const throttle = createAdaptiveThrottle({ maxKeys: 10, clock: () => 0 })
    for (let i = 0; i < 100; i++) {
      budget.recordRequest(`key-${i}`)
      throttle.record(`key-${i}`, true)
    }
    expect([budget.size, throttle.size]).toEqual([10, 10])
  })

  test.each([0, 1.5, -1, 'many'])('maxKeys %p is a ClientOptionError naming it', (maxKeys) => {
    expect(() => createRetryBudget({ maxKeys: maxKeys as number })).toThrow(ClientOptionError)
    expect(() => createRetryBudget({ maxKeys: maxKeys as number })).toThrow(/maxKeys/)
    expect(() => createAdaptiveThrottle({ maxKeys: maxKeys as number })).toThrow(/maxKeys/)
  })
})
