import {
  type AlgorithmName,
  type AlgorithmParams,
  algorithms,
  createLimiter,
  type Decision,
  type LeakyBucketState,
  leakyBucket,
  MemoryStore,
  type SlidingLogState,
  type TokenBucketState,
  tokenBucket,
} from '@sluice/core'
import fc from 'fast-check'

/** A trace: gaps between arrivals (ms, often 0 to make bursts, sometimes long) and a cost for each. */
const arrivals = (maxCost: number) =>
  fc.array(
    fc.record({
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3000 })),
      cost: fc.integer({ min: 1, max: maxCost }),
    }),
    { minLength: 1, maxLength: 200 },
  )

async function replay(
  algorithm: AlgorithmName,
  limit: number,
  windowMs: number,
  trace: { gap: number; cost: number }[],
) {
  let now = 1_700_000_000_000 + 137 // not aligned to any window
  const store = new MemoryStore({ clock: () => now })
  const limiter = createLimiter({ algorithm, limit, window: windowMs, store })
  const admitted: { at: number; cost: number }[] = []
  for (const { gap, cost } of trace) {
    now += gap
    const d: Decision = await limiter.consume('k', cost)
    if (d.allowed) admitted.push({ at: now, cost })
  }
  return admitted
}

const settings = { numRuns: 150 }

test('sliding log never admits more than L in any window (t - W, t]', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 1, max: 2000 }),
      arrivals(5),
      async (L, W, trace) => {
        const admitted = await replay('sliding-log', L, W, trace)
        for (const { at } of admitted) {
          const inWindow = admitted.filter((a) => a.at > at - W && a.at <= at).reduce((sum, a) => sum + a.cost, 0)
          expect(inWindow).toBeLessThanOrEqual(L)
        }
      },
    ),
    settings,
  )
})

test('fixed window never admits more than L per window', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 1, max: 2000 }),
      arrivals(5),
      async (L, W, trace) => {
        const admitted = await replay('fixed-window', L, W, trace)
        const perWindow = new Map<number, number>()
        for (const { at, cost } of admitted) {
          const k = Math.floor(at / W)
          perWindow.set(k, (perWindow.get(k) ?? 0) + cost)
        }
        for (const used of perWindow.values()) expect(used).toBeLessThanOrEqual(L)
      },
    ),
    settings,
  )
})

test('token bucket never admits more than B + r*T in any span of T', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 1, max: 2000 }),
      arrivals(5),
      async (B, W, trace) => {
        const admitted = await replay('token-bucket', B, W, trace)
        const r = B / W // tokens per ms
        for (let i = 0; i < admitted.length; i++) {
          let sum = 0
          for (let j = i; j < admitted.length; j++) {
            sum += (admitted[j] as { cost: number }).cost
            const T = (admitted[j] as { at: number }).at - (admitted[i] as { at: number }).at
            expect(sum).toBeLessThanOrEqual(B + r * T + 1e-9)
          }
        }
      },
    ),
    settings,
  )
})

test('sliding window never admits more than L between two points of one window span, weighted as specified', async () => {
  // The counter approximates; what it guarantees exactly is that each admission kept the estimate within L.
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 1, max: 2000 }),
      arrivals(5),
      async (L, W, trace) => {
        const admitted = await replay('sliding-window', L, W, trace)
        for (const { at } of admitted) {
          const k = Math.floor(at / W)
          const e = at - k * W
          const used = (window: number) =>
            admitted.filter((a) => a.at <= at && Math.floor(a.at / W) === window).reduce((s, a) => s + a.cost, 0)
          expect(Math.floor((used(k - 1) * (W - e)) / W) + used(k)).toBeLessThanOrEqual(L)
        }
      },
    ),
    settings,
  )
})

test('the leaky meter admits exactly what a token bucket of the same B and r admits', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 5000 }), arrivals(10), (B, W, trace) => {
      const params: AlgorithmParams = createLimiter({ algorithm: 'token-bucket', limit: B, window: W }).rules[0]!
      let now = 1_000_000
      let tokens: TokenBucketState | undefined
      let level: LeakyBucketState | undefined
      for (const { gap, cost } of trace) {
        now += gap
        const t = tokenBucket(tokens, now, cost, params, true)
        const l = leakyBucket(level, now, cost, params, true)
        expect(l.allowed).toBe(t.allowed)
        expect(l.remaining).toBe(t.remaining)
        expect(l.retryAfterMs).toBe(t.retryAfterMs)
        tokens = t.state
        level = l.state
      }
    }),
    { numRuns: 300 },
  )
})

test('a stacked request that one rule rejects changes no rule state', async () => {
  const names: AlgorithmName[] = ['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket']
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ algorithm: fc.constantFrom(...names), limit: fc.integer({ min: 1, max: 8 }) }), {
        minLength: 2,
        maxLength: 4,
      }),
      arrivals(4),
      async (ruleSpecs, trace) => {
        let now = 5_000_000
        const store = new MemoryStore({ clock: () => now })
        const rules = ruleSpecs.map((spec, i) => ({ ...spec, name: `r${i}`, window: 1000 }))
        const limiter = createLimiter({ rules, store })
        for (const { gap, cost } of trace) {
          now += gap
          const before = await limiter.peek('k', 1)
          const d = await limiter.consume('k', cost)
          if (!d.allowed) {
            const after = await limiter.peek('k', 1)
            expect(after.rules?.map((r) => [r.remaining, r.resetMs])).toEqual(
              before.rules?.map((r) => [r.remaining, r.resetMs]),
            )
          }
        }
      },
    ),
    settings,
  )
})

/** What a state means: for the sliding log, its live entries (its arrays are storage shared with later states). */
function meaning(state: unknown): string {
  if (state !== null && typeof state === 'object' && 'start' in state) {
    const log = state as SlidingLogState
    return JSON.stringify([log.times.slice(log.start, log.end), log.costs.slice(log.start, log.end), log.used])
  }
  return JSON.stringify(state)
}

test('every algorithm leaves what the input state means untouched (pure functions)', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...(Object.keys(algorithms) as (keyof typeof algorithms)[])),
      arrivals(3),
      (name, trace) => {
        const params = createLimiter({ algorithm: 'leaky-bucket', limit: 5, window: 1000 }).rules[0]!
        let state: unknown
        let now = 0
        for (const { gap, cost } of trace) {
          now += gap
          const frozen = meaning(state)
          const step = algorithms[name](state, now, cost, params, true)
          expect(meaning(state)).toBe(frozen)
          state = step.state
        }
      },
    ),
    { numRuns: 100 },
  )
})
