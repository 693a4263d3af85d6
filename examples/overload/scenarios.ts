// The overload experiments, each a function of nothing: the tests assert their figures and `npm run demo:overload`
// prints them. Every run drives the real core shedder (the object the adapters call) on virtual time.
import {
  createConcurrencyLimiter,
  createLimiter,
  MemoryLeaseStore,
  MemoryStore,
  PRIORITIES,
  type Priority,
  type QueueOrder,
} from '@sluice/core'
import { arrivedBetween, latencyOf, percentile, type Steady, shedSeries, steady } from './measure'
import { type DependencySpec, type Phase, type RequestKind, type SimulationRun, simulate } from './simulation'

/** The service of the experiments: 10 requests at a time, 100 ms each, an unbounded FIFO in front: 100/s. */
export const DEPENDENCY: DependencySpec = { servers: 10, serviceMs: 100 }
export const CAPACITY = 100
/** Clients give up after 2 s: an answer later than that is not goodput. */
export const PATIENCE_MS = 2000
/** `shedLoad({ maxInFlight: 10 })`: the ceiling is the dependency's concurrency; everything else is the default. */
export const SHED = { maxInFlight: 10 } as const
export const LOADS = [1.5, 2, 4, 10] as const
const DURATION_MS = 30_000
/** Figures are taken after the first 5 s, once the run has left its start behind. */
const STEADY_FROM_MS = 5_000

const constant = (multiple: number, untilMs = DURATION_MS): Phase[] => [{ untilMs, perSecond: CAPACITY * multiple }]

/** Goodput and latency at `multiple` x capacity, with and without shedding. */
export interface GoodputRow {
  readonly multiple: number
  readonly without: Steady
  readonly with: Steady
}

export async function goodputAt(multiple: number): Promise<GoodputRow> {
  const phases = constant(multiple)
  const [without, shed] = await Promise.all([
    simulate({ dependency: DEPENDENCY, phases, patienceMs: PATIENCE_MS }),
    simulate({ dependency: DEPENDENCY, phases, patienceMs: PATIENCE_MS, shed: SHED }),
  ])
  return { multiple, without: steady(without, STEADY_FROM_MS), with: steady(shed, STEADY_FROM_MS) }
}

/** The p99 latency of the same service at 0.3 x capacity, with the same shedder (it sheds nothing there). */
export async function unloadedP99Ms(): Promise<number> {
  const run = await simulate({ dependency: DEPENDENCY, phases: constant(0.3), patienceMs: PATIENCE_MS, shed: SHED })
  return steady(run, STEADY_FROM_MS).p99Ms
}

/** Goodput over time through an overload (0.5x for 5 s, 2x for 20 s, 0.5x for 10 s), for the chart. */
export interface Timeline {
  readonly bucketMs: number
  readonly offered: readonly Phase[]
  readonly without: readonly number[]
  readonly with: readonly number[]
}

export async function overloadTimeline(bucketMs = 500): Promise<Timeline> {
  const offered: Phase[] = [
    { untilMs: 5_000, perSecond: 50 },
    { untilMs: 25_000, perSecond: 200 },
    { untilMs: 35_000, perSecond: 50 },
  ]
  const [without, shed] = await Promise.all([
    simulate({ dependency: DEPENDENCY, phases: offered, patienceMs: PATIENCE_MS }),
    simulate({ dependency: DEPENDENCY, phases: offered, patienceMs: PATIENCE_MS, shed: SHED }),
  ])
  const { goodputSeries } = await import('./measure')
  return { bucketMs, offered, without: goodputSeries(without, bucketMs), with: goodputSeries(shed, bucketMs) }
}

/** A step from 0.5x to 3x at 10 s and back at 20 s: how fast shedding starts, settles and stops. */
export interface Reaction {
  /** From the step to the first 503, in ms. */
  readonly firstShedMs: number
  /** From the step until every following second sheds within 0.08 of the overload's own rate, in ms. */
  readonly settledMs: number
  /** The steady shed rate under 3x (the theory: 1 - 1/3). */
  readonly steadyShedRate: number
  /** From the drop back to 0.5x to the last 503, in ms (0 when none came after). */
  readonly lastShedAfterDropMs: number
  /** Shed rate per second of the overload. */
  readonly shedRatePerSecond: readonly number[]
}

export async function stepReaction(seed = 1): Promise<Reaction> {
  const step = 10_000
  const drop = 20_000
  const run = await simulate({
    seed,
    dependency: DEPENDENCY,
    phases: [
      { untilMs: step, perSecond: 50 },
      { untilMs: drop, perSecond: 300 },
      { untilMs: 30_000, perSecond: 50 },
    ],
    patienceMs: PATIENCE_MS,
    shed: SHED,
  })
  const shedTimes = run.requests.filter((r) => r.result === 'shed').map((r) => r.endedAt as number)
  const perSecond = shedSeries(run, 1000).slice(step / 1000, drop / 1000)
  const steadyShedRate = perSecond.slice(-5).reduce((a, b) => a + b, 0) / 5
  let settled = perSecond.length
  while (settled > 0 && Math.abs((perSecond[settled - 1] as number) - steadyShedRate) <= 0.08) settled--
  return {
    firstShedMs: Math.min(...shedTimes.filter((t) => t >= step)) - step,
    settledMs: settled * 1000,
    steadyShedRate,
    lastShedAfterDropMs: Math.max(0, ...shedTimes.filter((t) => t >= drop).map((t) => t - drop)),
    shedRatePerSecond: perSecond,
  }
}

/**
 * How the 30 small tenants of the noisy-neighbour runs send their 1/s each: `'steady'` (Poisson arrivals, each on its
 * own), `'bursty'` (5 at once every 5 s, each tenant at its own phase) or `'in-step'` (all 30 in the same instant,
 * every second, as clients on one cron schedule do).
 */
export type ArrivalPattern = 'steady' | 'bursty' | 'in-step'
export const ARRIVAL_PATTERNS: readonly ArrivalPattern[] = ['steady', 'bursty', 'in-step']
/** The shedder of the noisy-neighbour runs: a line of 100 that may wait 1 s, shared fairly among tenants. */
export const FAIR_SHED = { maxInFlight: 10, queue: 100, maxWait: '1s' } as const
const SMALL_TENANTS = 30

/** 30 small tenants at 1/s each and one at 200/s, with `tenant` set. */
export interface NoisyNeighbour {
  readonly pattern: ArrivalPattern
  /** The lowest share of its requests any small tenant got answered in time. */
  readonly worstSmallTenantServed: number
  readonly smallServed: number
  /** The big tenant's goodput per second. */
  readonly bigGoodput: number
  readonly totalGoodput: number
}

/** The small tenants' arrivals over the run, in the given pattern. */
function smallTenants(pattern: ArrivalPattern) {
  return (arrive: (atMs: number, kind: RequestKind) => void, random: () => number) => {
    for (let i = 0; i < SMALL_TENANTS; i++) {
      const kind: RequestKind = { priority: 'normal', tenant: `small-${i}` }
      if (pattern === 'in-step') {
        for (let at = 500; at < DURATION_MS; at += 1000) arrive(at, kind)
      } else if (pattern === 'bursty') {
        for (let at = random() * 5000; at < DURATION_MS; at += 5000) for (let n = 0; n < 5; n++) arrive(at, kind)
      } else {
        for (let at = -Math.log(1 - random()) * 1000; at < DURATION_MS; at += -Math.log(1 - random()) * 1000) {
          arrive(at, kind)
        }
      }
    }
  }
}

export async function noisyNeighbour(pattern: ArrivalPattern = 'steady'): Promise<NoisyNeighbour> {
  const run = await simulate({
    dependency: DEPENDENCY,
    phases: [{ untilMs: DURATION_MS, perSecond: 200 }],
    patienceMs: PATIENCE_MS,
    shed: FAIR_SHED,
    kind: () => ({ priority: 'normal', tenant: 'big' }),
    extra: smallTenants(pattern),
  })
  const requests = arrivedBetween(run, STEADY_FROM_MS, DURATION_MS)
  const small = requests.filter((r) => r.kind.tenant !== 'big')
  const byTenant = new Map<string, { arrived: number; served: number }>()
  for (const r of small) {
    const counts = byTenant.get(r.kind.tenant) ?? { arrived: 0, served: 0 }
    counts.arrived++
    if (r.result === 'served') counts.served++
    byTenant.set(r.kind.tenant, counts)
  }
  const seconds = (DURATION_MS - STEADY_FROM_MS) / 1000
  const big = requests.filter((r) => r.kind.tenant === 'big' && r.result === 'served').length
  return {
    pattern,
    worstSmallTenantServed: Math.min(...[...byTenant.values()].map((c) => c.served / c.arrived)),
    smallServed: small.filter((r) => r.result === 'served').length / small.length,
    bigGoodput: big / seconds,
    totalGoodput: steady(run, STEADY_FROM_MS).goodput,
  }
}

/** 2x overload with 10% critical, 60% normal, 30% sheddable requests. */
export interface PriorityMix {
  readonly byPriority: Readonly<Record<Priority, { arrived: number; served: number; shed: number }>>
  readonly run: SimulationRun
}

export async function priorityMix(): Promise<PriorityMix> {
  const run = await simulate({
    dependency: DEPENDENCY,
    phases: constant(2),
    patienceMs: PATIENCE_MS,
    shed: SHED,
    kind: (random) => {
      const u = random()
      return { priority: u < 0.1 ? 'critical' : u < 0.7 ? 'normal' : 'sheddable', tenant: '' }
    },
  })
  const byPriority = Object.fromEntries(
    PRIORITIES.map((priority) => {
      const of = run.requests.filter((r) => r.kind.priority === priority)
      return [
        priority,
        {
          arrived: of.length,
          served: of.filter((r) => r.result === 'served').length,
          shed: of.filter((r) => r.result === 'shed').length,
        },
      ]
    }),
  ) as PriorityMix['byPriority']
  return { byPriority, run }
}

/** Waiting on a fast service (50 at a time, 10 ms each: 5 000/s) with a deep line (1 000, `maxWait` 1 s). */
export interface QueueDiscipline {
  /** Under 2x, once the queue stands: the longest and the p99 wait, with the default 5 ms target. */
  readonly standingMaxWaitMs: number
  /** The same line with controlled delay off (`queueTarget` as long as `maxWait`). */
  readonly uncontrolledMaxWaitMs: number
  /** Goodput of each, per second. */
  readonly standingGoodput: number
  readonly uncontrolledGoodput: number
  /** A burst of 300 at once on a quiet service: how many were shed, and the longest wait. */
  readonly burstShed: number
  readonly burstMaxWaitMs: number
}

export async function queueDiscipline(): Promise<QueueDiscipline> {
  const fast: DependencySpec = { servers: 50, serviceMs: 10 }
  const deep = { maxInFlight: 50, queue: 1000, maxWait: '1s' } as const
  const phases: Phase[] = [{ untilMs: 3_000, perSecond: 10_000 }]
  const [controlled, uncontrolled, burst] = await Promise.all([
    simulate({ dependency: fast, phases, patienceMs: PATIENCE_MS, shed: deep }),
    simulate({ dependency: fast, phases, patienceMs: PATIENCE_MS, shed: { ...deep, queueTarget: '1s' } }),
    simulate({
      dependency: fast,
      phases: [{ untilMs: 1_000, perSecond: 500 }],
      burst: { atMs: 500, count: 300 },
      patienceMs: PATIENCE_MS,
      shed: deep,
    }),
  ])
  const maxWait = (run: SimulationRun) =>
    Math.max(...arrivedBetween(run, 1_000, 3_000).map((r) => (r.startedAt ?? r.arrivedAt) - r.arrivedAt))
  return {
    standingMaxWaitMs: maxWait(controlled),
    uncontrolledMaxWaitMs: maxWait(uncontrolled),
    standingGoodput: steady(controlled, 1_000).goodput,
    uncontrolledGoodput: steady(uncontrolled, 1_000).goodput,
    burstShed: burst.requests.filter((r) => r.result === 'shed').length,
    burstMaxWaitMs: Math.max(...burst.requests.map((r) => (r.startedAt ?? r.arrivedAt) - r.arrivedAt)),
  }
}

/** FIFO against adaptive LIFO on a slow service (10 at a time, 1 s each) at 2x, for clients of given patience. */
export interface OrderComparison {
  readonly patienceMs: number
  readonly goodput: Readonly<Record<QueueOrder, number>>
  readonly p99Ms: Readonly<Record<QueueOrder, number>>
}

export async function queueOrders(patienceMs: number): Promise<OrderComparison> {
  const slow: DependencySpec = { servers: 10, serviceMs: 1000 }
  const orders: QueueOrder[] = ['fifo', 'adaptive-lifo']
  const runs = await Promise.all(
    orders.map((queueOrder) =>
      simulate({
        dependency: slow,
        phases: [{ untilMs: 60_000, perSecond: 20 }],
        patienceMs,
        shed: { maxInFlight: 10, queueOrder },
      }),
    ),
  )
  const figures = runs.map((run) => steady(run, 10_000))
  return {
    patienceMs,
    goodput: { fifo: figures[0]?.goodput ?? 0, 'adaptive-lifo': figures[1]?.goodput ?? 0 },
    p99Ms: { fifo: figures[0]?.p99Ms ?? 0, 'adaptive-lifo': figures[1]?.p99Ms ?? 0 },
  }
}

/**
 * Little's law: a handler of 250 ms, then of 500 ms from 10 s on, offered 200/s. Under a concurrency limit of 30
 * at most 30 / 0.25 = 120 complete per second, and 60 once the handler slows down; under a rate limit of 120/s
 * as many are admitted as before, and the requests in flight pile up instead.
 */
export interface LittlesLaw {
  /** Completions per second under the concurrency limit, with the 250 ms and the 500 ms handler. */
  readonly concurrency: readonly [fast: number, slow: number]
  readonly concurrencyMaxInFlight: number
  /** Admissions per second under the rate limit alone. */
  readonly rateLimit: readonly [fast: number, slow: number]
  readonly rateLimitMaxInFlight: number
}

export async function littlesLaw(): Promise<LittlesLaw> {
  const handler: DependencySpec = {
    servers: Number.POSITIVE_INFINITY,
    serviceMs: (now) => (now < 10_000 ? 250 : 500),
  }
  const phases: Phase[] = [{ untilMs: 20_000, perSecond: 200 }]
  const concurrency = await simulate({
    dependency: handler,
    phases,
    patienceMs: 5_000,
    gate: (time) => {
      const limiter = createConcurrencyLimiter({ limit: 30, store: new MemoryLeaseStore(), timers: time })
      return () => limiter.acquire('all')
    },
  })
  const rate = await simulate({
    dependency: handler,
    phases,
    patienceMs: 5_000,
    gate: (time) => {
      const limiter = createLimiter({
        algorithm: 'token-bucket',
        limit: 30,
        rate: 120,
        store: new MemoryStore({ clock: () => time.now() }),
      })
      return async () => ({ allowed: (await limiter.consume('all')).allowed, release: () => undefined })
    },
  })
  const completed = (run: SimulationRun, fromMs: number, toMs: number) =>
    run.requests.filter((r) => r.result === 'served' && (r.endedAt as number) >= fromMs && (r.endedAt as number) < toMs)
      .length /
    ((toMs - fromMs) / 1000)
  const admitted = (run: SimulationRun, fromMs: number, toMs: number) =>
    run.requests.filter((r) => r.startedAt !== undefined && r.startedAt >= fromMs && r.startedAt < toMs).length /
    ((toMs - fromMs) / 1000)
  return {
    concurrency: [completed(concurrency, 2_000, 10_000), completed(concurrency, 12_000, 20_000)],
    concurrencyMaxInFlight: mostInFlight(concurrency),
    rateLimit: [admitted(rate, 2_000, 10_000), admitted(rate, 12_000, 20_000)],
    rateLimitMaxInFlight: mostInFlight(rate),
  }
}

/** The most requests running at once, from their start and end times. */
function mostInFlight(run: SimulationRun): number {
  const changes: [number, number][] = []
  for (const r of run.requests) {
    if (r.startedAt === undefined) continue
    changes.push([r.startedAt, 1], [(r.endedAt ?? r.startedAt) as number, -1])
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let now = 0
  let most = 0
  for (const [, change] of changes) {
    now += change
    most = Math.max(most, now)
  }
  return most
}

/** A ceiling set 10x too high (`maxInFlight: 100` for a service of 10), static or adaptive, at 2x. */
export interface AdaptiveCeiling {
  readonly staticP99Ms: number
  readonly adaptiveP99Ms: number
  readonly adaptiveGoodput: number
  readonly adaptiveMaxInFlight: number
}

export async function adaptiveCeiling(): Promise<AdaptiveCeiling> {
  const [fixed, adaptive] = await Promise.all(
    [false, true].map((on) =>
      simulate({
        dependency: DEPENDENCY,
        phases: constant(2),
        patienceMs: PATIENCE_MS,
        shed: { maxInFlight: 100, adaptive: on },
      }),
    ),
  )
  const adaptiveRun = adaptive as SimulationRun
  return {
    staticP99Ms: steady(fixed as SimulationRun, STEADY_FROM_MS).p99Ms,
    adaptiveP99Ms: steady(adaptiveRun, STEADY_FROM_MS).p99Ms,
    adaptiveGoodput: steady(adaptiveRun, STEADY_FROM_MS).goodput,
    adaptiveMaxInFlight: adaptiveRun.observations.maxInFlight,
  }
}

/**
 * Poisoning the adaptive ceiling: legitimate traffic of 400/s at 10 ms (a dependency of 8 at a time: 800/s), and
 * 3 000/s of requests the app answers in 0.2 ms (404s, or 429s of a limiter behind shedLoad) in pulses of 150 ms
 * every second. `shedLoad({ maxInFlight: 50 })`, its ceiling fixed or adaptive.
 */
export interface PoisonedCeiling {
  /** The share of legitimate requests served in time, with a fixed and with an adaptive ceiling. */
  readonly fixedServed: number
  readonly adaptiveServed: number
  /** The lowest adaptive ceiling seen after the first 5 s. */
  readonly lowestCeiling: number
}

export async function poisonedCeiling(): Promise<PoisonedCeiling> {
  const cheap: RequestKind = { priority: 'normal', tenant: 'scanner' }
  const spec = {
    dependency: { servers: 8, serviceMs: 10 },
    phases: [{ untilMs: DURATION_MS, perSecond: 400 }],
    patienceMs: PATIENCE_MS,
    answeredMs: (kind: RequestKind) => (kind.tenant === 'scanner' ? 0.2 : undefined),
    extra: (arrive: (atMs: number, kind: RequestKind) => void, random: () => number) => {
      for (let pulse = 0; pulse < DURATION_MS; pulse += 1000) {
        for (let at = pulse; at < pulse + 150; at += (-Math.log(1 - random()) * 1000) / 3000) arrive(at, cheap)
      }
    },
  }
  let lowestCeiling = Number.POSITIVE_INFINITY
  const [fixed, adaptive] = await Promise.all([
    simulate({ ...spec, shed: { maxInFlight: 50 } }),
    simulate({
      ...spec,
      shed: { maxInFlight: 50, adaptive: true },
      observe: (shedder, now) => {
        if (now >= STEADY_FROM_MS) lowestCeiling = Math.min(lowestCeiling, shedder.limit)
      },
    }),
  ])
  const served = (run: SimulationRun) => {
    const legit = arrivedBetween(run, STEADY_FROM_MS, DURATION_MS).filter((r) => r.kind.tenant !== 'scanner')
    return legit.filter((r) => r.result === 'served').length / legit.length
  }
  return { fixedServed: served(fixed), adaptiveServed: served(adaptive), lowestCeiling }
}

/** The p99 of the served requests' waits in line. */
export function p99WaitMs(run: SimulationRun): number {
  return percentile(
    run.requests.filter((r) => r.result === 'served').map((r) => (r.startedAt as number) - r.arrivedAt),
    0.99,
  )
}

export { latencyOf }
