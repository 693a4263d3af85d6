import type { Outcome } from '@sluice/core/store'
import { Rejections } from '../src/rejections'

const rejected = (retryAfterMs: number): Outcome => ({
  allowed: false,
  remaining: 0,
  resetMs: retryAfterMs + 500,
  retryAfterMs,
  delayMs: 0,
})
/** The binding that asked Redis (any object: the short-circuit compares identities). */
const OWNER = { binding: 'free plan' }

const admitted: Outcome = { allowed: true, remaining: 3, resetMs: 1000, retryAfterMs: 0, delayMs: 0 }

describe('the local short-circuit', () => {
  let now = 1_000_000
  const clock = () => now
  beforeEach(() => {
    now = 1_000_000
  })

  test('answers a rejection locally until its retry time, its waits counted down from the reply', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('k', 1, [rejected(1000)], OWNER)
    now += 400
    expect(rejections.known('k', 1, OWNER)).toEqual([{ ...rejected(600), resetMs: 1100 }])
    now += 599
    expect(rejections.known('k', 1, OWNER)?.[0]?.retryAfterMs).toBe(1)
    now += 1 // the retry time: Redis decides again
    expect(rejections.known('k', 1, OWNER)).toBeUndefined()
  })

  test('covers the same or a higher cost, not a smaller one, which may fit', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('k', 3, [rejected(1000)], OWNER)
    expect(rejections.known('k', 3, OWNER)).toBeDefined()
    expect(rejections.known('k', 5, OWNER)).toBeDefined()
    expect(rejections.known('k', 2, OWNER)).toBeUndefined()
  })

  test('a fresh answer replaces what was known: an admitted one ends the rejection', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('k', 3, [rejected(1000)], OWNER)
    rejections.remember('k', 1, [admitted], OWNER)
    expect(rejections.known('k', 3, OWNER)).toBeUndefined()
  })

  test('stacked rules: the longest wait of the rejecting rules holds, every rule keeps its outcome', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('ab', 1, [admitted, rejected(2000)], OWNER)
    now += 1500
    const known = rejections.known('ab', 1, OWNER)
    expect(known?.map((o) => [o.allowed, o.retryAfterMs])).toEqual([
      [true, 0],
      [false, 500],
    ])
  })

  test('never remembers a wait that has no end (a cost that can never fit) or none at all', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('never', 1, [rejected(Number.POSITIVE_INFINITY)], OWNER)
    rejections.remember('fine', 1, [admitted], OWNER)
    expect(rejections.known('never', 1, OWNER)).toBeUndefined()
    expect(rejections.known('fine', 1, OWNER)).toBeUndefined()
  })

  test('holds at most maxKeys rejections, dropping the oldest; 0 turns it off', () => {
    const rejections = new Rejections(2, clock)
    for (const key of ['a', 'b', 'c']) rejections.remember(key, 1, [rejected(1000)], OWNER)
    expect(['a', 'b', 'c'].map((key) => rejections.known(key, 1, OWNER) !== undefined)).toEqual([false, true, true])
    const off = new Rejections(0, clock)
    off.remember('a', 1, [rejected(1000)], OWNER)
    expect(off.known('a', 1, OWNER)).toBeUndefined()
  })

  test('forget and clear drop what was known', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('a', 1, [rejected(1000)], OWNER)
    rejections.remember('b', 1, [rejected(1000)], OWNER)
    rejections.forget('a')
    expect(rejections.known('a', 1, OWNER)).toBeUndefined()
    expect(rejections.known('b', 1, OWNER)).toBeDefined()
    rejections.clear()
    expect(rejections.known('b', 1, OWNER)).toBeUndefined()
  })

  test('a rejection is known only to the binding that got it: a plan with a higher limit asks Redis', () => {
    const rejections = new Rejections(10, () => 0)
    const pro = { binding: 'pro plan' }
    rejections.remember('k', 1, [rejected(30_000)], OWNER)
    expect(rejections.known('k', 1, pro)).toBeUndefined()
    expect(rejections.known('k', 1, OWNER)).toBeDefined()
    // The pro plan's answer (admitted) replaces what was known, for every binding.
    rejections.remember('k', 1, [admitted], pro)
    expect(rejections.known('k', 1, OWNER)).toBeUndefined()
  })
})
