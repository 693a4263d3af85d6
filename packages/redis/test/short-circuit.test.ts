import { type CompiledRule, createLimiter, type LimiterOptions } from '@sluice/core'
import type { ScriptOutcome } from '../src/batch'
import { Rejections } from '../src/short-circuit'

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
    rejections: Rejections,
    key: string,
    rules: readonly CompiledRule[],
    cost: number,
    outcomes: ScriptOutcome[],
  ) => rejections.learn(key, [key], rules, cost, true, outcomes, OWNER, now)

  test('answers a rejection of cost 1 locally until its retry time, its waits counted down from the sending', () => {
    const rejections = new Rejections(10, 10_000, clock)
    remember(rejections, 'k', SLIDING, 1, [rejected(1000)])
    now += 400
    expect(rejections.known('k', 1, OWNER)).toEqual([{ ...rejected(600), resetMs: 1100 }])
    now += 599
    expect(rejections.known('k', 1, OWNER)?.[0]?.retryAfterMs).toBe(1)
    now += 1 // the retry time: Redis decides again
    expect(rejections.known('k', 1, OWNER)).toBeUndefined()
  })

  test('trusts a rejection for maxMs at most', () => {
    const rejections = new Rejections(10, 1000, clock)
    remember(rejections, 'k', SLIDING, 1, [rejected(5000)])
    now += 999
    expect(rejections.known('k', 1, OWNER)).toBeDefined()
    now += 1
    expect(rejections.known('k', 1, OWNER)).toBeUndefined()
  })

  test('a blocked key is answered until its block ends; a higher cost, where the remaining count may grow, never', () => {
    const rejections = new Rejections(10, 10_000, clock)
    remember(rejections, 'blocked', BLOCKED, 2, [rejected(8000, 3000)])
    remember(rejections, 'costly', SLIDING, 2, [rejected(8000)])
    now += 2999
    expect(rejections.known('blocked', 2, OWNER)?.[0]?.retryAfterMs).toBe(5001)
    expect(rejections.known('costly', 2, OWNER)).toBeUndefined()
    now += 1 // the block's end: a refusal now would start another block, which only Redis may write
    expect(rejections.known('blocked', 2, OWNER)).toBeUndefined()
  })

  test('the same cost only, unless every rule is a window that refuses every cost alike', () => {
    const rejections = new Rejections(10, 10_000, clock)
    remember(rejections, 'fixed', FIXED, 3, [rejected(59_000)])
    remember(rejections, 'sliding', SLIDING, 1, [rejected(1000)])
    expect([2, 3, 5, 6].map((cost) => rejections.known('fixed', cost, OWNER) !== undefined)).toEqual([
      false,
      true,
      true,
      false,
    ])
    expect([1, 2].map((cost) => rejections.known('sliding', cost, OWNER) !== undefined)).toEqual([true, false])
  })

  test('a fresh answer replaces what was known: an admitted one ends the rejection', () => {
    const rejections = new Rejections(10, 10_000, clock)
    remember(rejections, 'k', FIXED, 3, [rejected(1000)])
    remember(rejections, 'k', FIXED, 1, [admitted(1000)])
    expect(rejections.known('k', 3, OWNER)).toBeUndefined()
  })

  test('stacked rules: a rule that admits holds the answer only while its numbers cannot change', () => {
    const rejections = new Rejections(10, 10_000, clock)
    // A token bucket that is not full refills: its remaining count grows. A full one stays as it is.
    rejections.learn('uu', ['u1', 'u2'], STACKED, 1, true, [admitted(300), rejected(5000)], OWNER, now)
    expect(rejections.known('uu', 1, OWNER)).toBeUndefined()
    rejections.learn('uu', ['u1', 'u2'], STACKED, 1, true, [admitted(0), rejected(5000)], OWNER, now)
    now += 900
    expect(rejections.known('uu', 1, OWNER)?.map((o) => [o.allowed, o.retryAfterMs])).toEqual([
      [true, 0],
      [false, 4100],
    ])
  })

  test('any other call on one of the keys forgets the rejections that involve it', () => {
    const rejections = new Rejections(10, 10_000, clock)
    rejections.learn('uu', ['u1', 'u2'], STACKED, 1, true, [admitted(0), rejected(5000)], OWNER, now)
    rejections.learn('vu', ['v1', 'u2'], STACKED, 1, true, [admitted(0), rejected(5000)], OWNER, now)
    rejections.touched(['u1'])
    expect(rejections.known('uu', 1, OWNER)).toBeUndefined()
    expect(rejections.known('vu', 1, OWNER)).toBeDefined()
    rejections.learn('u2', ['u2'], SLIDING, 1, false, [admitted(10)], OWNER, now)
    expect(rejections.known('vu', 1, OWNER)).toBeUndefined()
  })

  test('remembers no peek (it starts no block a charge would) and no wait without an end', () => {
    const rejections = new Rejections(10, 10_000, clock)
    rejections.learn('peeked', ['peeked'], SLIDING, 1, false, [rejected(1000)], OWNER, now)
    remember(rejections, 'never', SLIDING, 6, [rejected(Number.POSITIVE_INFINITY)])
    remember(rejections, 'fine', SLIDING, 1, [admitted(0)])
    expect(rejections.known('peeked', 1, OWNER)).toBeUndefined()
    expect(rejections.known('never', 6, OWNER)).toBeUndefined()
    expect(rejections.known('fine', 1, OWNER)).toBeUndefined()
  })

  test('a clock that stepped back to before the call asks Redis', () => {
    const rejections = new Rejections(10, 10_000, clock)
    remember(rejections, 'k', SLIDING, 1, [rejected(1000)])
    now -= 1
    expect(rejections.known('k', 1, OWNER)).toBeUndefined()
  })

  test('holds at most maxKeys rejections, dropping the oldest; 0 turns it off', () => {
    const rejections = new Rejections(2, 10_000, clock)
    for (const key of ['a', 'b', 'c']) remember(rejections, key, SLIDING, 1, [rejected(1000)])
    expect(['a', 'b', 'c'].map((key) => rejections.known(key, 1, OWNER) !== undefined)).toEqual([false, true, true])
    const off = new Rejections(0, 10_000, clock)
    remember(off, 'a', SLIDING, 1, [rejected(1000)])
    expect(off.known('a', 1, OWNER)).toBeUndefined()
  })

  test('clear drops what was known', () => {
    const rejections = new Rejections(10, 10_000, clock)
    remember(rejections, 'a', SLIDING, 1, [rejected(1000)])
    rejections.clear()
    expect(rejections.known('a', 1, OWNER)).toBeUndefined()
  })

  test('a rejection is known only to the binding that got it: a plan with a higher limit asks Redis', () => {
    const rejections = new Rejections(10, 60_000, clock)
    const pro = { binding: 'pro plan' }
    remember(rejections, 'k', SLIDING, 1, [rejected(30_000)])
    expect(rejections.known('k', 1, pro)).toBeUndefined()
    expect(rejections.known('k', 1, OWNER)).toBeDefined()
    // The pro plan's answer (admitted) replaces what was known, for every binding.
    rejections.learn('k', ['k'], SLIDING, 1, true, [admitted(10)], pro, now)
    expect(rejections.known('k', 1, OWNER)).toBeUndefined()
  })
})
