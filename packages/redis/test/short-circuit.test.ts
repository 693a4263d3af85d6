import { type CompiledRule, createLimiter, type LimiterOptions } from '@sluice/core'
import type { ScriptOutcome } from '../src/batch'
import { ShortCircuit } from '../src/short-circuit'

const rejected = (retryAfterMs: number, blockLeftMs = 0): ScriptOutcome => ({
  allowed: false,
  remaining: 0,
  resetMs: retryAfterMs + 500,
  retryAfterMs,
  delayMs: 0,
  blockLeftMs,
})
const admitted = (resetMs: number): ScriptOutcome => ({
  allowed: true,
  remaining: 3,
  resetMs,
  retryAfterMs: 0,
  delayMs: 0,
  blockLeftMs: 0,
})
/** The binding that asked Redis (any object: the short-circuit compares identities). */
const OWNER = { binding: 'free plan' }

const rulesOf = (options: LimiterOptions): readonly CompiledRule[] => createLimiter(options).rules
const SLIDING = rulesOf({ algorithm: 'sliding-window', limit: 5, window: '1m' })
const FIXED = rulesOf({ algorithm: 'fixed-window', limit: 5, window: '1m' })
const BLOCKED = rulesOf({ algorithm: 'sliding-window', limit: 5, window: '1m', block: '15m' })
const STACKED = rulesOf({
  rules: [
    { name: 'burst', algorithm: 'token-bucket', limit: 10, window: '1s' },
    { name: 'daily', limit: 3, period: 'day' },
  ],
})

describe('the local short-circuit', () => {
  // A minute into a window: the fixed window ends 59 s later.
  let now = 1_699_999_980_000
  const clock = () => now
  beforeEach(() => {
    now = 1_699_999_980_000
  })
  const remember = (
    shortCircuit: ShortCircuit,
    key: string,
    rules: readonly CompiledRule[],
    cost: number,
    outcomes: ScriptOutcome[],
  ) => shortCircuit.learn(key, [key], rules, cost, true, outcomes, OWNER, now)

  test('answers a rejection of cost 1 locally until its retry time, its waits counted down from the sending', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    remember(shortCircuit, 'k', SLIDING, 1, [rejected(1000)])
    now += 400
    expect(shortCircuit.known('k', 1, OWNER)).toEqual([{ ...rejected(600), resetMs: 1100 }])
    now += 599
    expect(shortCircuit.known('k', 1, OWNER)?.[0]?.retryAfterMs).toBe(1)
    now += 1 // the retry time: Redis decides again
    expect(shortCircuit.known('k', 1, OWNER)).toBeUndefined()
  })

  test('trusts a rejection for maxMs at most', () => {
    const shortCircuit = new ShortCircuit(10, 1000, clock)
    remember(shortCircuit, 'k', SLIDING, 1, [rejected(5000)])
    now += 999
    expect(shortCircuit.known('k', 1, OWNER)).toBeDefined()
    now += 1
    expect(shortCircuit.known('k', 1, OWNER)).toBeUndefined()
  })

  test('a blocked key is answered until its block ends; a higher cost, where the remaining count may grow, never', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    remember(shortCircuit, 'blocked', BLOCKED, 2, [rejected(8000, 3000)])
    remember(shortCircuit, 'costly', SLIDING, 2, [rejected(8000)])
    now += 2999
    expect(shortCircuit.known('blocked', 2, OWNER)?.[0]?.retryAfterMs).toBe(5001)
    expect(shortCircuit.known('costly', 2, OWNER)).toBeUndefined()
    now += 1 // the block's end: a refusal now would start another block, which only Redis may write
    expect(shortCircuit.known('blocked', 2, OWNER)).toBeUndefined()
  })

  test('the same cost only, unless every rule is a window that refuses every cost alike', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    remember(shortCircuit, 'fixed', FIXED, 3, [rejected(59_000)])
    remember(shortCircuit, 'sliding', SLIDING, 1, [rejected(1000)])
    expect([2, 3, 5, 6].map((cost) => shortCircuit.known('fixed', cost, OWNER) !== undefined)).toEqual([
      false,
      true,
      true,
      false,
    ])
    expect([1, 2].map((cost) => shortCircuit.known('sliding', cost, OWNER) !== undefined)).toEqual([true, false])
  })

  test('a fresh answer replaces what was known: an admitted one ends the rejection', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    remember(shortCircuit, 'k', FIXED, 3, [rejected(1000)])
    remember(shortCircuit, 'k', FIXED, 1, [admitted(1000)])
    expect(shortCircuit.known('k', 3, OWNER)).toBeUndefined()
  })

  test('stacked rules: a rule that admits holds the answer only while its numbers cannot change', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    // A token bucket that is not full refills: its remaining count grows. A full one stays as it is.
    shortCircuit.learn('uu', ['u1', 'u2'], STACKED, 1, true, [admitted(300), rejected(5000)], OWNER, now)
    expect(shortCircuit.known('uu', 1, OWNER)).toBeUndefined()
    shortCircuit.learn('uu', ['u1', 'u2'], STACKED, 1, true, [admitted(0), rejected(5000)], OWNER, now)
    now += 900
    expect(shortCircuit.known('uu', 1, OWNER)?.map((o) => [o.allowed, o.retryAfterMs])).toEqual([
      [true, 0],
      [false, 4100],
    ])
  })

  test('any other call on one of the keys forgets the rejections that involve it', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    shortCircuit.learn('uu', ['u1', 'u2'], STACKED, 1, true, [admitted(0), rejected(5000)], OWNER, now)
    shortCircuit.learn('vu', ['v1', 'u2'], STACKED, 1, true, [admitted(0), rejected(5000)], OWNER, now)
    shortCircuit.touched(['u1'])
    expect(shortCircuit.known('uu', 1, OWNER)).toBeUndefined()
    expect(shortCircuit.known('vu', 1, OWNER)).toBeDefined()
    shortCircuit.learn('u2', ['u2'], SLIDING, 1, false, [admitted(10)], OWNER, now)
    expect(shortCircuit.known('vu', 1, OWNER)).toBeUndefined()
  })

  test('remembers no peek (it starts no block a charge would) and no wait without an end', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    shortCircuit.learn('peeked', ['peeked'], SLIDING, 1, false, [rejected(1000)], OWNER, now)
    remember(shortCircuit, 'never', SLIDING, 6, [rejected(Number.POSITIVE_INFINITY)])
    remember(shortCircuit, 'fine', SLIDING, 1, [admitted(0)])
    expect(shortCircuit.known('peeked', 1, OWNER)).toBeUndefined()
    expect(shortCircuit.known('never', 6, OWNER)).toBeUndefined()
    expect(shortCircuit.known('fine', 1, OWNER)).toBeUndefined()
  })

  test('a clock that stepped back to before the call asks Redis', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    remember(shortCircuit, 'k', SLIDING, 1, [rejected(1000)])
    now -= 1
    expect(shortCircuit.known('k', 1, OWNER)).toBeUndefined()
  })

  test('holds at most maxKeys shortCircuit, dropping the oldest; 0 turns it off', () => {
    const shortCircuit = new ShortCircuit(2, 10_000, clock)
    for (const key of ['a', 'b', 'c']) remember(shortCircuit, key, SLIDING, 1, [rejected(1000)])
    expect(['a', 'b', 'c'].map((key) => shortCircuit.known(key, 1, OWNER) !== undefined)).toEqual([false, true, true])
    const off = new ShortCircuit(0, 10_000, clock)
    remember(off, 'a', SLIDING, 1, [rejected(1000)])
    expect(off.known('a', 1, OWNER)).toBeUndefined()
  })

  test('clear drops what was known', () => {
    const shortCircuit = new ShortCircuit(10, 10_000, clock)
    remember(shortCircuit, 'a', SLIDING, 1, [rejected(1000)])
    shortCircuit.clear()
    expect(shortCircuit.known('a', 1, OWNER)).toBeUndefined()
  })

  test('a rejection is known only to the binding that got it: a plan with a higher limit asks Redis', () => {
    const shortCircuit = new ShortCircuit(10, 60_000, clock)
    const pro = { binding: 'pro plan' }
    remember(shortCircuit, 'k', SLIDING, 1, [rejected(30_000)])
    expect(shortCircuit.known('k', 1, pro)).toBeUndefined()
    expect(shortCircuit.known('k', 1, OWNER)).toBeDefined()
    // The pro plan's answer (admitted) replaces what was known, for every binding.
    shortCircuit.learn('k', ['k'], SLIDING, 1, true, [admitted(10)], pro, now)
    expect(shortCircuit.known('k', 1, OWNER)).toBeUndefined()
  })
})
