// The differential check shared by the standalone and the Cluster suites: random traces replayed at the same
// instants through a MemoryStore (the reference) and a RedisStore with default options (its local short-circuit on)
// must give identical outcomes, op for op.
import {
  type AlgorithmName,
  type BucketAlgorithmName,
  type CompiledRule,
  createLimiter,
  type Decision,
  MemoryStore,
} from '@sluice/core'
import type { DecisionTrace, Outcome } from '@sluice/core/store'
import type { RedisStoreClient } from '@sluice/redis'
import fc from 'fast-check'
import { replayStore } from '../../packages/redis/src/redis-store'
import { STARVED_REDIS_TIMEOUT_MS } from '../../scripts/redis-suite'
import { sleep } from './cluster-load'

export type StoreAlgorithm = AlgorithmName | 'leaky-queue' | 'calendar-window'

export interface RuleSpec {
  algorithm: StoreAlgorithm
  limit: number
  window: number
  rate: number | undefined
  /** A calendar window's period and zone. */
  period: { period: 'day' | 'month'; timeZone: string }
  /** A lockout after a rejection, in ms. */
  block: number | undefined
}

type Op =
  | { kind: 'apply'; gap: Gap; keys: number[]; cost: number; charge: boolean }
  | { kind: 'refund'; gap: Gap; keys: number[]; cost: number }
  | { kind: 'reset'; gap: Gap; keys: number[] }

/**
 * How far time moves before an op: a plain gap, to an instant where an answer changes, or back (a clock that steps
 * back: both stores keep each key's own time, op for op alike). Large steps (an hour or a day, back or forward) come
 * in every shape of trace when asked for: a clock stepped back and forward again must find both stores agreeing.
 */
type Gap =
  | { to: 'plain'; ms: number }
  | { to: 'back'; ms: number }
  | { to: 'window-boundary'; offset: -1 | 0 | 1 }
  | { to: 'retry-after'; offset: -1 | 0 | 1 }
  | { to: 'reset'; offset: -1 | 0 | 1 }
  | { to: 'period-end'; offset: -1 | 0 | 1 }

export interface Trace {
  rules: RuleSpec[]
  start: number
  ops: Op[]
}

// A 250 ms window, windows that do not divide a second, a minute; rates that make fractional token intervals.
const WINDOWS = [1, 7, 250, 1000, 1500, 60_000]
const RATES = [0.37, 1, 3, 7.5, 1000]
// Keys the store must keep apart; one of them is 10 kB.
export const ODD_KEYS = ['a', 'b', '{a}', 'a}', '{', '', 'x y\nz', 'ключ:🔑', '%7B', 'k'.repeat(10_000)]
const BUCKETS: readonly StoreAlgorithm[] = ['token-bucket', 'leaky-bucket', 'leaky-queue']
// Zones with DST both ways, a half-hour DST shift, a 45-minute offset, and none.
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu']
const BLOCKS = [1, 250, 1000, 60_000, 86_400_000]

function ruleArb(algorithms: readonly StoreAlgorithm[]): fc.Arbitrary<RuleSpec> {
  return fc.record({
    algorithm: fc.constantFrom(...algorithms),
    limit: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 7, max: 60 })),
    window: fc.constantFrom(...WINDOWS),
    rate: fc.option(fc.constantFrom(...RATES), { nil: undefined, freq: 3 }),
    period: fc.record({
      period: fc.constantFrom('day' as const, 'month' as const),
      timeZone: fc.constantFrom(...ZONES),
    }),
    block: fc.option(fc.constantFrom(...BLOCKS), { nil: undefined, freq: 3 }),
  })
}

function gapArb(largeSteps: boolean): fc.Arbitrary<Gap> {
  const offset = fc.constantFrom(-1 as const, 0 as const, 1 as const)
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ to: fc.constant('plain' as const), ms: fc.integer({ min: 0, max: 400 }) }) },
    { weight: 1, arbitrary: fc.record({ to: fc.constant('plain' as const), ms: fc.integer({ min: 0, max: 90_000 }) }) },
    { weight: 2, arbitrary: fc.record({ to: fc.constant('window-boundary' as const), offset }) },
    { weight: 2, arbitrary: fc.record({ to: fc.constant('retry-after' as const), offset }) },
    { weight: 1, arbitrary: fc.record({ to: fc.constant('reset' as const), offset }) },
    { weight: 1, arbitrary: fc.record({ to: fc.constant('back' as const), ms: fc.integer({ min: 1, max: 90_000 }) }) },
    { weight: 1, arbitrary: fc.record({ to: fc.constant('period-end' as const), offset }) },
    ...(largeSteps ? [{ weight: 1, arbitrary: largeStepArb() }] : []),
  )
}

/** A large clock step: an hour or a day, back or forward (and forward again after one back, when both come). */
function largeStepArb(): fc.Arbitrary<Gap> {
  return fc.record({
    to: fc.constantFrom('back' as const, 'plain' as const),
    ms: fc.constantFrom(3_600_000, 86_400_000),
  })
}

/** The shape of a trace: `mixed` wanders over every kind of gap; `flood` repeats a few keys at short gaps. */
export type TraceShape = 'mixed' | 'flood'

export function traceArb(
  algorithms: readonly StoreAlgorithm[],
  maxRules: number,
  shape: TraceShape,
  largeSteps = false,
): fc.Arbitrary<Trace> {
  const flood = shape === 'flood'
  const rules = fc.array(flood ? floodRuleArb(algorithms) : ruleArb(algorithms), { minLength: 1, maxLength: maxRules })
  return rules.chain((rules) => {
    const keys = fc.array(fc.integer({ min: 0, max: flood ? 1 : 3 }), {
      minLength: rules.length,
      maxLength: rules.length,
    })
    const maxCost = Math.max(...rules.map((r) => r.limit)) + 1
    const cost = fc.oneof(
      { weight: flood ? 8 : 4, arbitrary: fc.constant(1) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: maxCost }) },
    )
    const gap = flood ? floodGapArb(largeSteps) : gapArb(largeSteps)
    const op: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 12,
        arbitrary: fc.record({ kind: fc.constant('apply' as const), gap, keys, cost, charge: fc.constant(true) }),
      },
      {
        weight: 2,
        arbitrary: fc.record({ kind: fc.constant('apply' as const), gap, keys, cost, charge: fc.constant(false) }),
      },
      { weight: flood ? 1 : 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), gap, keys, cost }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const), gap, keys }) },
    )
    return fc.record({
      rules: fc.constant(rules),
      start: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }),
      ops: flood
        ? fc.array(op, { minLength: 10, maxLength: 60, size: 'max' })
        : fc.array(op, { minLength: 1, maxLength: 30 }),
    })
  })
}

// A flood: small limits, windows and blocks of a few seconds (and one of 15 minutes), so that keys stay rejected and
// blocked for many ops in a row, and a rejection answered without Redis is compared with Redis's own answer.
const FLOOD_WINDOWS = [250, 1000, 4000, 60_000]
const FLOOD_BLOCKS = [250, 1000, 3000, 900_000]

function floodRuleArb(algorithms: readonly StoreAlgorithm[]): fc.Arbitrary<RuleSpec> {
  return fc.record({
    algorithm: fc.constantFrom(...algorithms),
    limit: fc.integer({ min: 1, max: 4 }),
    window: fc.constantFrom(...FLOOD_WINDOWS),
    rate: fc.option(fc.constantFrom(...RATES), { nil: undefined, freq: 3 }),
    period: fc.record({ period: fc.constant('day' as const), timeZone: fc.constantFrom(...ZONES) }),
    block: fc.option(fc.constantFrom(...FLOOD_BLOCKS), { nil: undefined, freq: 2 }),
  })
}

function floodGapArb(largeSteps: boolean): fc.Arbitrary<Gap> {
  const offset = fc.constantFrom(-1 as const, 0 as const, 1 as const)
  return fc.oneof(
    { weight: 8, arbitrary: fc.record({ to: fc.constant('plain' as const), ms: fc.integer({ min: 0, max: 250 }) }) },
    { weight: 2, arbitrary: fc.record({ to: fc.constant('plain' as const), ms: fc.integer({ min: 0, max: 4000 }) }) },
    { weight: 2, arbitrary: fc.record({ to: fc.constant('retry-after' as const), offset }) },
    { weight: 1, arbitrary: fc.record({ to: fc.constant('window-boundary' as const), offset }) },
    { weight: 1, arbitrary: fc.record({ to: fc.constant('reset' as const), offset }) },
    { weight: 1, arbitrary: fc.record({ to: fc.constant('back' as const), ms: fc.integer({ min: 1, max: 2000 }) }) },
    ...(largeSteps ? [{ weight: 1, arbitrary: largeStepArb() }] : []),
  )
}

export function compile(specs: readonly RuleSpec[], prefix: string): CompiledRule[] {
  const compiled = createLimiter({
    prefix,
    rules: specs.map((spec, i) => {
      const rule = { name: `r${i}`, limit: spec.limit, ...(spec.block === undefined ? {} : { block: spec.block }) }
      if (spec.algorithm === 'calendar-window') return { ...rule, ...spec.period }
      const algorithm = spec.algorithm === 'leaky-queue' ? 'leaky-bucket' : spec.algorithm
      return BUCKETS.includes(spec.algorithm) && spec.rate !== undefined
        ? { ...rule, algorithm: algorithm as BucketAlgorithmName, rate: spec.rate }
        : { ...rule, algorithm, window: spec.window }
    }),
  }).rules
  // The queue behind schedule() runs as its own store algorithm; a compiled rule says which one to run.
  return compiled.map((rule, i) =>
    specs[i]?.algorithm === 'leaky-queue'
      ? { ...rule, algorithm: 'leaky-queue', algorithmCode: 'lq', keySpace: `${prefix}:${rule.name}:lq:` }
      : rule,
  )
}

export function advance(now: number, gap: Gap, rules: readonly CompiledRule[], last: readonly Outcome[]): number {
  switch (gap.to) {
    case 'plain':
      return now + gap.ms
    case 'back':
      return now - gap.ms
    case 'window-boundary': {
      const w = (rules[0] as CompiledRule).windowMs
      return Math.max(now, (Math.floor(now / w) + 1) * w + gap.offset)
    }
    case 'retry-after': {
      const waits = last.map((o) => o.retryAfterMs).filter((ms) => ms > 0 && Number.isFinite(ms))
      return now + Math.max(0, (waits.length > 0 ? Math.max(...waits) : 1) + gap.offset)
    }
    case 'reset': {
      const resets = last.map((o) => o.resetMs)
      return now + Math.max(0, (resets.length > 0 ? Math.max(...resets) : 1) + gap.offset)
    }
    case 'period-end': {
      // The end of the first calendar rule's period (or a plain millisecond without one).
      const calendar = rules.find((rule) => rule.calendar !== undefined)?.calendar
      return Math.max(now, now + (calendar?.msUntilEnd(now) ?? 1) + gap.offset)
    }
  }
}

/** What a store computed for each rule, from the Decision it answered (every rule's, for stacked rules). */
export function outcomes(decision: Decision): Outcome[] {
  return (decision.rules ?? [decision]).map(({ allowed, remaining, resetMs, retryAfterMs, delayMs }) => ({
    allowed,
    remaining,
    resetMs,
    retryAfterMs,
    delayMs,
  }))
}

let traceCount = 0

/** A log line that says Redis is unavailable goes `into`; any other to `otherwise`. */
const outagesInto =
  (into: string[], otherwise: (message: string) => void = () => {}) =>
  (message: string) =>
    /unavailable/.test(message) ? into.push(message) : otherwise(message)

/** A trace replayed up to this many times when the store declared Redis unavailable meanwhile (see `differential`). */
const ATTEMPTS = 5

/** What `differential` replayed: the ops, and how many of the decisions the RedisStore's short-circuit answered. */
export interface Replayed {
  readonly ops: number
  readonly shortCircuited: number
}

/**
 * Replays `numRuns` random traces through both stores; each run gets its own key prefix. Fails with the shrunk
 * trace and the first op where the outcomes differ.
 *
 * The RedisStore has default options but for its timeout: the default 100 ms per call is missed by a redis-server
 * starved on a loaded 2-core machine, and the store then decides locally, by design (after an outage it logs, or for
 * one call alone when Redis answered later calls first), so the op compares the local stand-in, not Redis.
 * STARVED_REDIS_TIMEOUT_MS is missed by no starved server. Should Redis still be declared unavailable, the trace says
 * nothing about the scripts: it is replayed from the start on fresh keys, a little later each time (at most five
 * times; a trace that never gets through fails).
 */
export async function differential(
  client: RedisStoreClient,
  algorithms: readonly StoreAlgorithm[],
  options: {
    numRuns: number
    maxRules: number
    shape?: TraceShape
    seed?: number
    path?: string
    trace?: Trace
    /** Also steps of an hour and a day, back and forward (see `Gap`). */
    largeSteps?: boolean
  },
): Promise<Replayed> {
  let ops = 0
  let shortCircuited = 0
  // A trace given is replayed as it is (a regression case); otherwise random ones.
  const traces = options.trace
    ? fc.constant(options.trace)
    : traceArb(algorithms, options.maxRules, options.shape ?? 'mixed', options.largeSteps)
  const replay = async (trace: Trace): Promise<'replayed' | 'outage'> => {
    const rules = compile(trace.rules, `diff${process.pid}.${traceCount++}`)
    let now = trace.start
    const clock = () => now
    const memoryStore = new MemoryStore({ clock })
    // Default options (but the timeout): the short-circuit answers whatever it may, and must answer what Redis would.
    const outages: string[] = []
    // Other lines go where the default logger would send them.
    const logger = { warn: outagesInto(outages, console.warn), error: outagesInto(outages, console.error) }
    const redisStore = replayStore({ client, clock, logger, timeout: STARVED_REDIS_TIMEOUT_MS })
    const memory = memoryStore.bind(rules)
    const redis = redisStore.bind(rules)
    const done = (result: 'replayed' | 'outage') => {
      memoryStore.clear()
      redisStore.close()
      return result
    }
    let last: readonly Outcome[] = []
    for (const [step, op] of trace.ops.entries()) {
      now = advance(now, op.gap, rules, last)
      const keys = op.keys.map((k) => ODD_KEYS[k] as string)
      ops++
      if (op.kind === 'apply') {
        const expected = outcomes(await memory.apply(keys, op.cost, op.charge))
        const trace: DecisionTrace = { source: 'store' }
        const actual = outcomes(await redis.apply(keys, op.cost, op.charge, trace))
        if (trace.source === 'short-circuit') shortCircuited++
        if (outages.length > 0) return done('outage')
        if (JSON.stringify(actual) !== JSON.stringify(expected)) {
          throw new Error(
            `op ${step} at t=${now} (${JSON.stringify(op)}):\n  memory ${JSON.stringify(expected)}\n  redis  ${JSON.stringify(actual)}`,
          )
        }
        last = expected
      } else if (op.kind === 'refund') {
        await memory.refund(keys, op.cost)
        await redis.refund(keys, op.cost)
      } else {
        await memory.reset(keys)
        await redis.reset(keys)
      }
    }
    if (outages.length > 0) return done('outage')
    // The final state must agree too: peek every rule alone (bound on its own, beside the stack it belongs to; its own
    // warnings are not this test's, an outage is).
    const alone = { logger: { warn: outagesInto(outages), error: outagesInto(outages) } }
    for (const [i, rule] of rules.entries()) {
      const key = ODD_KEYS[trace.ops.at(-1)?.keys[i] ?? 0] as string
      const actual = outcomes(await redisStore.bind([rule], alone).apply([key], 1, false))
      if (outages.length > 0) return done('outage')
      expect(actual).toEqual(outcomes(await memoryStore.bind([rule], alone).apply([key], 1, false)))
    }
    return done('replayed')
  }
  const property = fc.asyncProperty(traces, async (trace) => {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if ((await replay(trace)) === 'replayed') return
      // Whatever starved Redis may last a moment: the next replay starts after it.
      await sleep(250 * attempt)
    }
    throw new Error(`Redis was declared unavailable in each of ${ATTEMPTS} replays of this trace`)
  })
  await fc.assert(property, {
    numRuns: options.numRuns,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.path === undefined ? {} : { path: options.path }),
  })
  return { ops, shortCircuited }
}
