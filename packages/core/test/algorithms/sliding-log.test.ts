// The sliding log keeps its entries in storage that successive states share (see SlidingLogState). What a store
// relies on: the step is pure, so a state answers what its own history says whatever other states were derived from
// the same storage; a busy key's storage stays about as long as its live part; and admitting does not copy the log.
import { createLimiter } from '@sluice/core'
import fc from 'fast-check'
import {
  type AlgorithmParams,
  type SlidingLogState,
  type Step,
  slidingLog,
  slidingLogRefund,
} from '../../src/algorithms'

function params(limit: number, windowMs: number): AlgorithmParams {
  return createLimiter({ algorithm: 'sliding-log', limit, window: windowMs }).rules[0] as AlgorithmParams
}

/**
 * The sliding log written out plainly: every admitted entry as [time, cost], oldest first, in the key's time, and how
 * far that was ahead of the clock at the last step (0 unless the clock stepped back).
 */
interface Model {
  readonly entries: readonly (readonly [number, number])[]
  readonly offsetMs: number
}

/**
 * The key's time (the documented rule): the clock once it is at or past the newest entry; before it (it stepped back),
 * the later of the newest entry and the clock plus the offset.
 */
function keyTimeOf({ entries, offsetMs }: Model, clock: number): number {
  const newest = entries.at(-1)
  if (newest === undefined || clock >= newest[0]) return clock
  return Math.max(newest[0], clock + offsetMs)
}

type Outcome = Omit<Step<unknown>, 'state'>

/** What the documented rules say a step answers, and the model after it. */
function modelStep(
  model: Model,
  clock: number,
  cost: number,
  { limit, windowMs }: AlgorithmParams,
  charge: boolean,
): [Model, Outcome] {
  const { entries } = model
  const now = keyTimeOf(model, clock)
  const aheadMs = now - clock
  const live = entries.filter(([t]) => t > now - windowMs) // an entry exactly W old has expired
  const used = live.reduce((sum, [, c]) => sum + c, 0)
  const last = live.at(-1)
  const resetMs = last === undefined ? 0 : last[0] + windowMs - now
  if (used + cost > limit) {
    let retryAfterMs = Number.POSITIVE_INFINITY
    let freed = 0
    for (const [t, c] of cost > limit ? [] : live) {
      freed += c
      if (used - freed + cost <= limit) {
        retryAfterMs = t + windowMs - now
        break
      }
    }
    return [
      { entries, offsetMs: aheadMs },
      { allowed: false, remaining: limit - used, resetMs, retryAfterMs, delayMs: 0, aheadMs },
    ]
  }
  if (!charge) {
    return [
      { entries, offsetMs: aheadMs },
      { allowed: true, remaining: limit - used, resetMs, retryAfterMs: 0, delayMs: 0, aheadMs },
    ]
  }
  const next =
    last !== undefined && last[0] === now
      ? [...live.slice(0, -1), [now, last[1] + cost] as const]
      : [...live, [now, cost] as const]
  return [
    { entries: next, offsetMs: aheadMs },
    { allowed: true, remaining: limit - used - cost, resetMs: windowMs, retryAfterMs: 0, delayMs: 0, aheadMs },
  ]
}

/** A refund per the documented rule: the newest entries give the cost back, newest first; then a peek. */
function modelRefund(model: Model, clock: number, cost: number, rule: AlgorithmParams): [Model, Outcome] {
  const offsetMs = keyTimeOf(model, clock) - clock
  const kept = model.entries.map(([t, c]) => [t, c] as [number, number])
  let left = cost
  while (left > 0 && kept.length > 0) {
    const entry = kept.at(-1) as [number, number]
    const taken = Math.min(left, entry[1])
    left -= taken
    entry[1] -= taken
    if (entry[1] === 0) kept.pop()
  }
  return modelStep({ entries: kept, offsetMs }, clock, 1, rule, false)
}

function outcome({ state: _, ...rest }: Step<unknown>): Outcome {
  return rest
}

const tree = fc.record({
  limit: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.constantFrom(1, 5, 100, 1000),
  ops: fc.array(
    fc.record({
      // Which state the operation starts from: any earlier one (0 is a new key).
      parent: fc.nat(),
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 }), fc.integer({ min: -1500, max: 1500 })),
      cost: fc.integer({ min: 1, max: 10 }),
      kind: fc.constantFrom('consume', 'consume', 'consume', 'peek', 'refund'),
    }),
    { minLength: 1, maxLength: 60 },
  ),
})

test('every state answers what its own history says, whatever else was derived from the same storage', () => {
  fc.assert(
    fc.property(tree, ({ limit, windowMs, ops }) => {
      const rule = params(limit, windowMs)
      const nodes: { state: SlidingLogState | undefined; now: number; model: Model }[] = [
        { state: undefined, now: 10_000, model: { entries: [], offsetMs: 0 } },
      ]
      for (const { parent, gap, cost, kind } of ops) {
        const from = nodes[parent % nodes.length] as (typeof nodes)[number]
        const now = Math.max(0, from.now + gap)
        const step =
          kind === 'refund'
            ? slidingLogRefund(from.state, now, cost, rule)
            : slidingLog(from.state, now, cost, rule, kind === 'consume')
        const [model, expected] =
          kind === 'refund'
            ? modelRefund(from.model, now, cost, rule)
            : modelStep(from.model, now, cost, rule, kind === 'consume')
        expect({ kind, now, cost, ...outcome(step) }).toEqual({ kind, now, cost, ...expected })
        nodes.push({ state: step.state, now, model })
      }
    }),
    { numRuns: 300 },
  )
})

test('a state answers the same after a state derived from it added to its newest entry and appended it', () => {
  const rule = params(4, 1000)
  const first = slidingLog(undefined, 0, 1, rule, true).state
  const kept = slidingLog(first, 100, 1, rule, true).state // entries at 0 and 100, 2 used
  const asks = () => [5, 4, 3, 2].map((cost) => slidingLog(kept, 300, cost, rule, false))
  const before = asks()
  // Another request in the same millisecond (the entry at 100 now holds 2), then one that appends that entry.
  const merged = slidingLog(kept, 100, 1, rule, true).state
  slidingLog(merged, 200, 1, rule, true)
  expect(asks()).toEqual(before)
  // A cost above the limit is never admitted; 3 waits for the entry at 0 to expire, 4 for the one at 100 as well.
  expect(before.map((s) => [s.allowed, s.retryAfterMs])).toEqual([
    [false, Number.POSITIVE_INFINITY],
    [false, 800],
    [false, 700],
    [true, 0],
  ])
})

test("a busy key's storage stays within its live entries plus a bounded expired prefix", () => {
  const rule = params(10, 100)
  let state: SlidingLogState | undefined
  let longest = 0
  // A request every 20 ms for 100 windows: at most 5 entries live at once.
  for (let now = 0; now < 10_000; now += 20) {
    state = slidingLog(state, now, 1, rule, true).state
    longest = Math.max(longest, state?.times.length ?? 0)
  }
  expect(longest).toBeLessThanOrEqual(64 + 2 * 5 + 1)
})

test.each([
  ['a short log', 5],
  ['a log longer than 64 entries', 150],
])('admitting into %s appends in place, without copying the log', (_, entries) => {
  const rule = params(1000, 60_000)
  let state: SlidingLogState | undefined
  for (let now = 0; now < entries; now++) state = slidingLog(state, now, 1, rule, true).state
  const next = slidingLog(state, entries, 1, rule, true).state
  expect(next?.times).toBe(state?.times)
  expect(next?.costs).toBe(state?.costs)
  expect(next?.used).toBe(entries + 1)
})

test('a clock stepped back keeps the count of a log whose oldest entry had already expired', () => {
  const rule = params(4, 100)
  let state = slidingLog(undefined, 0, 2, rule, true).state
  state = slidingLog(state, 50, 1, rule, true).state
  state = slidingLog(state, 120, 1, rule, true).state // the entry at 0 has expired: 50 and 120 are live, 2 used
  // The clock reads 60 ms earlier: the two live entries move back with it (to -10 and 60), the expired one stays gone.
  const back = slidingLog(state, 60, 1, rule, false)
  expect(back).toMatchObject({ allowed: true, remaining: 2, resetMs: 100 })
  expect(slidingLog(back.state, 89, 3, rule, false)).toMatchObject({ allowed: false, remaining: 2, retryAfterMs: 1 })
  expect(slidingLog(back.state, 90, 3, rule, false)).toMatchObject({ allowed: true, remaining: 3 })
})
