// The Step contract a store relies on: a step that charges nothing (a peek, or a refused request) hands back the very
// state it was given, so the store has nothing to write; only a clock that stepped back moves the state. Checked at
// the instant the state was last written, where "earlier than the state" and "at the state's time" meet.
import { type AlgorithmName, createLimiter, type LimiterOptions } from '@sluice/core'
import { type AlgorithmParams, algorithms, type StoreAlgorithmName } from '../../src/algorithms'

function paramsOf(options: LimiterOptions): AlgorithmParams {
  return createLimiter(options).rules[0] as AlgorithmParams
}

const T = 1_750_000_000_123

const CASES: [StoreAlgorithmName, LimiterOptions][] = (
  ['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'leaky-bucket'] as AlgorithmName[]
).map((algorithm) => [algorithm, { algorithm, limit: 3, window: '1s' }])
CASES.push(['leaky-queue', { algorithm: 'leaky-bucket', limit: 3, window: '1s' }])
CASES.push(['calendar-window', { limit: 3, period: 'day' }])

describe.each(CASES)('%s', (name, options) => {
  const step = algorithms[name]
  const params = paramsOf(options)

  test.each([1, 3])('after %i charged at one instant, a peek and a refusal at that instant change no state', (n) => {
    let state: unknown
    for (let i = 0; i < n; i++) state = step(state, T, 1, params, true).state
    const peek = step(state, T, 1, params, false)
    expect(peek.state).toBe(state)
    const refused = step(state, T, 4, params, true)
    expect(refused.allowed).toBe(false)
    expect(refused.state).toBe(state)
  })
})

test("the calendar window given a rule without a period says that it needs one (a store's wiring mistake)", () => {
  const params = paramsOf({ limit: 3, window: '1s' })
  expect(() => algorithms['calendar-window'](undefined, T, 1, params, true)).toThrow(
    "sluice: the 'calendar-window' algorithm needs a `period`",
  )
})

describe.each(CASES.filter(([name]) => name !== 'calendar-window'))('%s on a window of 1 ms', (name, options) => {
  const step = algorithms[name]
  const params = paramsOf({ ...options, window: 1 } as LimiterOptions)

  test('a new key is full and answers whole numbers of ms; so does a key just charged', () => {
    const fresh = step(undefined, T, 1, params, false)
    expect(fresh).toMatchObject({ allowed: true, remaining: 3 })
    const charged = step(undefined, T, 3, params, true)
    const later = [step(charged.state, T, 1, params, false), step(charged.state, T + 1, 1, params, false)]
    for (const s of [fresh, charged, ...later]) {
      expect([s.remaining, s.resetMs, s.retryAfterMs, s.delayMs].every(Number.isSafeInteger)).toBe(true)
    }
  })
})
