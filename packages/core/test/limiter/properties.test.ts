import { type AlgorithmName, createLimiter, type Decision, MemoryStore } from '@sluice/core'
import fc from 'fast-check'
import {
  type AlgorithmParams,
  algorithms,
  type LeakyBucketState,
  leakyBucket,
  type SlidingLogState,
  type TokenBucketState,
  tokenBucket,
} from '../../src/algorithms'

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

type Admitted = { at: number; cost: number }[]

/** Replays random traces through `algorithm` with a random limit and window, and checks what was admitted. */
function forRandomTraces(
  algorithm: AlgorithmName,
  check: (admitted: Admitted, limit: number, windowMs: number) => void,
) {
  return fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 1, max: 2000 }),
      arrivals(5),
      async (limit, windowMs, trace) => check(await replay(algorithm, limit, windowMs, trace), limit, windowMs),
    ),
    settings,
  )
}

const costBetween = (admitted: Admitted, from: (at: number) => boolean) =>
  admitted.filter((a) => from(a.at)).reduce((sum, a) => sum + a.cost, 0)

test('sliding log never admits more than L in any window (t - W, t]', async () => {
  await forRandomTraces('sliding-log', (admitted, L, W) => {
    for (const { at } of admitted) expect(costBetween(admitted, (t) => t > at - W && t <= at)).toBeLessThanOrEqual(L)
  })
})

test('fixed window never admits more than L per window', async () => {
  await forRandomTraces('fixed-window', (admitted, L, W) => {
    for (const { at } of admitted) {
      const k = Math.floor(at / W)
      expect(costBetween(admitted, (t) => Math.floor(t / W) === k)).toBeLessThanOrEqual(L)
    }
  })
})

test('token bucket never admits more than B + r*T in any span of T', async () => {
  await forRandomTraces('token-bucket', (admitted, B, W) => {
    const r = B / W // tokens per ms
    for (const first of admitted) {
      for (const last of admitted) {
        if (last.at < first.at) continue
        const T = last.at - first.at
        expect(costBetween(admitted, (t) => t >= first.at && t <= last.at)).toBeLessThanOrEqual(B + r * T + 1e-9)
      }
    }
  })
})

test('sliding window keeps every admission within L, weighted as specified', async () => {
  // The counter approximates; what it guarantees exactly is that each admission kept the estimate within L.
  await forRandomTraces('sliding-window', (admitted, L, W) => {
    for (const { at } of admitted) {
      const k = Math.floor(at / W)
      const e = at - k * W
      const used = (window: number) => costBetween(admitted, (t) => t <= at && Math.floor(t / W) === window)
      expect(Math.floor((used(k - 1) * (W - e)) / W) + used(k)).toBeLessThanOrEqual(L)
    }
  })
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

const BUCKET = { algorithm: 'leaky-bucket', limit: 5, window: 1000 } as const

test('every algorithm leaves what the input state means untouched (pure functions)', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...(Object.keys(algorithms) as (keyof typeof algorithms)[])),
      arrivals(3),
      (name, trace) => {
        // A quota's calendar window needs its period; every other algorithm reads the bucket's numbers.
        const options = name === 'calendar-window' ? ({ limit: 5, period: 'day' } as const) : BUCKET
        const params = createLimiter(options).rules[0]!
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
