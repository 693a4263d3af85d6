import type { Outcome } from '@sluice/core/store'
import { Rejections } from '../src/rejections'

const rejected = (retryAfterMs: number): Outcome => ({
  allowed: false,
  remaining: 0,
  resetMs: retryAfterMs + 500,
  retryAfterMs,
  delayMs: 0,
})
const admitted: Outcome = { allowed: true, remaining: 3, resetMs: 1000, retryAfterMs: 0, delayMs: 0 }

describe('the local short-circuit', () => {
  let now = 1_000_000
  const clock = () => now
  beforeEach(() => {
    now = 1_000_000
  })

  test('answers a rejection locally until its retry time, its waits counted down from the reply', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('k', 1, [rejected(1000)])
    now += 400
    expect(rejections.known('k', 1)).toEqual([{ ...rejected(600), resetMs: 1100 }])
    now += 599
    expect(rejections.known('k', 1)?.[0]?.retryAfterMs).toBe(1)
    now += 1 // the retry time: Redis decides again
    expect(rejections.known('k', 1)).toBeUndefined()
  })

  test('covers the same or a higher cost, not a smaller one, which may fit', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('k', 3, [rejected(1000)])
    expect(rejections.known('k', 3)).toBeDefined()
    expect(rejections.known('k', 5)).toBeDefined()
    expect(rejections.known('k', 2)).toBeUndefined()
  })

  test('a fresh answer replaces what was known: an admitted one ends the rejection', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('k', 3, [rejected(1000)])
    rejections.remember('k', 1, [admitted])
    expect(rejections.known('k', 3)).toBeUndefined()
  })

  test('stacked rules: the longest wait of the rejecting rules holds, every rule keeps its outcome', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('ab', 1, [admitted, rejected(2000)])
    now += 1500
    const known = rejections.known('ab', 1)
    expect(known?.map((o) => [o.allowed, o.retryAfterMs])).toEqual([
      [true, 0],
      [false, 500],
    ])
  })

  test('never remembers a wait that has no end (a cost that can never fit) or none at all', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('never', 1, [rejected(Number.POSITIVE_INFINITY)])
    rejections.remember('fine', 1, [admitted])
    expect(rejections.known('never', 1)).toBeUndefined()
    expect(rejections.known('fine', 1)).toBeUndefined()
  })

  test('holds at most maxKeys rejections, dropping the oldest; 0 turns it off', () => {
    const rejections = new Rejections(2, clock)
    for (const key of ['a', 'b', 'c']) rejections.remember(key, 1, [rejected(1000)])
    expect(['a', 'b', 'c'].map((key) => rejections.known(key, 1) !== undefined)).toEqual([false, true, true])
    const off = new Rejections(0, clock)
    off.remember('a', 1, [rejected(1000)])
    expect(off.known('a', 1)).toBeUndefined()
  })

  test('forget and clear drop what was known', () => {
    const rejections = new Rejections(10, clock)
    rejections.remember('a', 1, [rejected(1000)])
    rejections.remember('b', 1, [rejected(1000)])
    rejections.forget('a')
    expect(rejections.known('a', 1)).toBeUndefined()
    expect(rejections.known('b', 1)).toBeDefined()
    rejections.clear()
    expect(rejections.known('b', 1)).toBeUndefined()
  })
})
