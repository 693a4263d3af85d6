// What the numbers of a Decision promise, checked against the algorithm itself on random traces:
// - `remaining`: exactly that many more requests of cost 1 are admitted at the same instant, and no more;
// - `retryAfterMs` of a rejection: the same request is admitted after that wait and not a millisecond sooner;
// - `resetMs`: the key is back to its full allowance after that long and not a millisecond sooner.
import { type AlgorithmName, createLimiter, type LimiterOptions } from '@sluice/core'
import fc from 'fast-check'
import { type AlgorithmParams, algorithms, refunds, type StoreAlgorithmName } from '../../src/algorithms'

// The calendar window (a quota's period) is checked in calendar.test.ts: its boundaries are the calendar's, not now + windowMs.
type Name = Exclude<StoreAlgorithmName, 'calendar-window'>

const NAMES: readonly Name[] = [
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
  'leaky-queue',
]

const BUCKETS: readonly Name[] = ['token-bucket', 'leaky-bucket', 'leaky-queue']

function paramsOf(name: Name, limit: number, windowMs: number, rate: number | undefined): AlgorithmParams {
  const algorithm: AlgorithmName = name === 'leaky-queue' ? 'leaky-bucket' : name
  const rule =
    rate !== undefined && BUCKETS.includes(name) ? { algorithm, limit, rate } : { algorithm, limit, window: windowMs }
  return createLimiter(rule as LimiterOptions).rules[0] as AlgorithmParams
}

const trace = fc.record({
  limit: fc.integer({ min: 1, max: 12 }),
  windowMs: fc.constantFrom(1, 7, 60, 250, 1000, 1500),
  rate: fc.option(fc.constantFrom(0.37, 3, 7.5, 1000), { nil: undefined, freq: 2 }),
  start: fc.integer({ min: 0, max: 10_000 }),
  ops: fc.array(
    fc.record({
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 2000 })),
      cost: fc.integer({ min: 1, max: 12 }),
    }),
    { minLength: 1, maxLength: 40 },
  ),
})

describe.each(NAMES)('%s', (name) => {
  const step = algorithms[name]

  test('remaining, retryAfterMs and resetMs mean exactly what they say', () => {
    fc.assert(
      fc.property(trace, ({ limit, windowMs, rate, start, ops }) => {
        const params = paramsOf(name, limit, windowMs, rate)
        let state: unknown
        let now = start
        for (const op of ops) {
          now += op.gap
          const cost = Math.min(op.cost, limit)
          const decision = step(state, now, cost, params, true)
          const after = decision.allowed ? decision.state : state
          const at = (t: number, c = 1) => step(after, t, c, params, false)
          const where = `${name} limit ${limit} window ${windowMs} rate ${rate} at t=${now}, cost ${cost}`

          // remaining: that many requests of cost 1 now, each charged, then a refusal.
          let s = after
          for (let i = 0; i < decision.remaining; i++) {
            const next = step(s, now, 1, params, true)
            if (!next.allowed) throw new Error(`${where}: only ${i} of remaining ${decision.remaining} admitted`)
            s = next.state
          }
          if (step(s, now, 1, params, false).allowed) {
            throw new Error(`${where}: more than remaining ${decision.remaining} admitted`)
          }

          if (decision.allowed) {
            if (decision.retryAfterMs !== 0) throw new Error(`${where}: admitted with retryAfterMs`)
          } else {
            // retryAfterMs: the same request, unchanged state, is admitted exactly then.
            const wait = decision.retryAfterMs
            if (!(wait > 0)) throw new Error(`${where}: rejected with retryAfterMs ${wait}`)
            if (!step(state, now + wait, cost, params, false).allowed) {
              throw new Error(`${where}: still rejected after retryAfterMs ${wait}`)
            }
            if (step(state, now + wait - 1, cost, params, false).allowed) {
              throw new Error(`${where}: admitted 1 ms before retryAfterMs ${wait}`)
            }
          }

          // resetMs: full allowance then, not before.
          const reset = decision.resetMs
          if (at(now + reset).remaining !== limit) throw new Error(`${where}: not full after resetMs ${reset}`)
          if (reset > 0 && at(now + reset - 1).remaining === limit) {
            throw new Error(`${where}: full 1 ms before resetMs ${reset}`)
          }
          state = after
        }
      }),
      { numRuns: 300 },
    )
  })

  test('a refund at the instant of the charge leaves the key as it was before it', () => {
    fc.assert(
      fc.property(trace, ({ limit, windowMs, rate, start, ops }) => {
        const params = paramsOf(name, limit, windowMs, rate)
        let state: unknown
        let now = start
        for (const op of ops) {
          now += op.gap
          const cost = Math.min(op.cost, limit)
          const before = step(state, now, 1, params, false)
          const decision = step(state, now, cost, params, true)
          if (!decision.allowed) continue
          const { state: _, ...undone } = refunds[name](decision.state, now, cost, params)
          const { state: __, ...expected } = before
          if (JSON.stringify(undone) !== JSON.stringify(expected)) {
            throw new Error(
              `${name} at t=${now}, cost ${cost}: refunded ${JSON.stringify(undone)}, was ${JSON.stringify(expected)}`,
            )
          }
          state = decision.state
        }
      }),
      { numRuns: 300 },
    )
  })

  test('a refund after the key has reset gives nothing back, and a refund of a key with no state is a new key', () => {
    fc.assert(
      fc.property(trace, fc.integer({ min: 0, max: 5000 }), ({ limit, windowMs, rate, start, ops }, late) => {
        const params = paramsOf(name, limit, windowMs, rate)
        const fresh = step(undefined, start, 1, params, false)
        const { state: _, ...none } = refunds[name](undefined, start, 1, params)
        const { state: __, ...freshView } = fresh
        if (JSON.stringify(none) !== JSON.stringify(freshView)) {
          throw new Error(`${name}: a refund of no state gave ${JSON.stringify(none)}`)
        }
        let state: unknown
        let now = start
        let resetAt = start
        for (const op of ops) {
          now += op.gap
          const decision = step(state, now, Math.min(op.cost, limit), params, true)
          if (!decision.allowed) continue
          state = decision.state
          resetAt = now + decision.resetMs
        }
        // Past the reset, the charges are history: a refund cannot make room beyond a new key's.
        const t = resetAt + late
        const { state: ___, ...refunded } = refunds[name](state, t, Math.min(ops[0]?.cost ?? 1, limit), params)
        const { state: ____, ...peeked } = step(state, t, 1, params, false)
        if (JSON.stringify(refunded) !== JSON.stringify(peeked) || refunded.remaining !== limit) {
          throw new Error(
            `${name} at t=${t}: refunded ${JSON.stringify(refunded)}, a peek shows ${JSON.stringify(peeked)}`,
          )
        }
      }),
      { numRuns: 200 },
    )
  })
})
