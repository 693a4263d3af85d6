import { createLimiter, MemoryStore, type RuleOptions } from '@sluice/core'
import { committed, evaluateRules } from '@sluice/core/store'

/** A fixed-window limiter of stacked rules on a memory store whose clock stays at 0. */
function stack(rules: RuleOptions[]) {
  return createLimiter({ algorithm: 'fixed-window', rules, store: new MemoryStore({ clock: () => 0 }) })
}

describe('the decision of stacked rules is the binding rule’s', () => {
  test('two rules that both reject: the one with the longest wait (and so Retry-After) binds', async () => {
    const limiter = stack([
      { name: 'burst', limit: 1, window: '10s' },
      { name: 'hour', limit: 1, window: '1m' },
    ])
    await limiter.consume('k')
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, rule: 'hour', retryAfterMs: 60_000 })
  })

  test('rules that reject with the same wait: the first one listed binds', async () => {
    const limiter = stack([
      { name: 'user', limit: 1, window: '1m' },
      { name: 'tenant', limit: 1, window: '1m' },
    ])
    await limiter.consume('k')
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, rule: 'user', retryAfterMs: 60_000 })
  })

  test('rules that all admit: the one with the fewest remaining binds, the first listed on a tie', async () => {
    const tight = stack([
      { name: 'minute', limit: 3, window: '1m' },
      { name: 'hour', limit: 10, window: '1h' },
    ])
    expect(await tight.consume('k')).toMatchObject({ allowed: true, rule: 'minute', remaining: 2, resetMs: 60_000 })
    const tied = stack([
      { name: 'minute', limit: 5, window: '1m' },
      { name: 'hour', limit: 5, window: '1h' },
    ])
    expect(await tied.consume('k')).toMatchObject({ allowed: true, rule: 'minute', remaining: 4, resetMs: 60_000 })
  })

  test("a single rule's decision is its own, with no list of rules", async () => {
    const plain = createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1m' })
    const blocking = createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1m', block: '1m' })
    for (const limiter of [plain, blocking]) {
      const decision = await limiter.consume('k')
      expect(decision).toMatchObject({ allowed: true, rule: 'default', remaining: 4 })
      expect(decision.rules).toBeUndefined()
    }
  })

  test('a cost too big for one rule names that rule even when another has fewer remaining', async () => {
    const limiter = stack([
      { name: 'big', limit: 10, window: '1m' },
      { name: 'small', limit: 3, window: '1m' },
    ])
    for (const other of ['a', 'b', 'c']) await limiter.consume(['u', other], 3) // big: 1 left; small: fresh keys
    const decision = await limiter.consume(['u', 'd'], 5)
    expect(decision).toMatchObject({
      allowed: false,
      rule: 'small',
      costExceedsCapacity: true,
      retryAfterMs: Number.POSITIVE_INFINITY,
    })
    // A cost equal to a rule's limit fits that rule: it is only short of units now.
    const atLimit = await limiter.consume(['v', 'e'], 10)
    expect(atLimit.rules?.map((d) => [d.rule, d.allowed, d.costExceedsCapacity, d.retryAfterMs])).toEqual([
      ['big', true, false, 0],
      ['small', false, true, Number.POSITIVE_INFINITY],
    ])
  })
})

describe('committed: whether a store writes back every rule of a request', () => {
  const { rules } = createLimiter({
    algorithm: 'fixed-window',
    rules: [
      { name: 'minute', limit: 5, window: '1m' },
      { name: 'hour', limit: 8, window: '1h' },
    ],
  })

  test('a charged request that every rule admits is committed', () => {
    expect(committed(evaluateRules(rules, [undefined, undefined], 0, 5, true), true)).toBe(true)
  })

  test('a request one rule rejects is not, nor a peek that every rule would admit', () => {
    expect(committed(evaluateRules(rules, [undefined, undefined], 0, 6, true), true)).toBe(false)
    expect(committed(evaluateRules(rules, [undefined, undefined], 0, 1, false), false)).toBe(false)
  })
})
