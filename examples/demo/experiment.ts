import { type AlgorithmName, createLimiter, MemoryStore } from '@sluice/core'
import { arrivalTimes, largestInAnySpan } from './pattern'

export const LIMIT = 10
export const WINDOW_MS = 1000
/** The experiment's time origin: an instant on a whole second, so window boundaries fall on whole seconds. */
export const ORIGIN = Date.UTC(2026, 0, 1)

export interface Outcome {
  readonly at: number
  readonly allowed: boolean
  /** When the request went on: its arrival when admitted at once, its departure for the queue. */
  readonly releasedAt: number
}

export interface Row {
  readonly name: string
  readonly outcomes: readonly Outcome[]
  readonly admitted: number
  readonly largestInOneSecond: number
}

/** One client's decision: admitted, and when it may go, at virtual time `at` (ms since the origin). */
export type Decide = (at: number) => Promise<{ allowed: boolean; delayMs: number }>

export const ALGORITHMS: readonly AlgorithmName[] = [
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
]

/** What the limiter of an experiment is given: the demo's is limit 10 per second, cost 1 (the playground's vary). */
export interface LimitSettings {
  readonly limit: number
  readonly windowMs: number
  /** The cost of each request. */
  readonly cost: number
}

export const DEMO_SETTINGS: LimitSettings = { limit: LIMIT, windowMs: WINDOW_MS, cost: 1 }

/** Limits one algorithm in process, on a memory store whose clock is the experiment's virtual time. */
export function inProcess(algorithm: AlgorithmName | 'leaky-queue', settings: LimitSettings = DEMO_SETTINGS): Decide {
  let now = ORIGIN
  const store = new MemoryStore({ clock: () => now })
  const queue = algorithm === 'leaky-queue'
  const limiter = createLimiter({
    algorithm: queue ? 'leaky-bucket' : algorithm,
    limit: settings.limit,
    window: settings.windowMs,
    store,
  })
  return async function decide(at) {
    now = ORIGIN + at
    const decision = queue
      ? await limiter.enqueue('client', settings.cost)
      : await limiter.consume('client', settings.cost)
    return { allowed: decision.allowed, delayMs: decision.delayMs }
  }
}

/**
 * Sends the arrivals (default: the demo's 80) through `decide`, in order, and sums up; `largestInOneSecond` counts
 * in any span of `spanMs` (default 1 s).
 */
export async function run(name: string, decide: Decide, arrivals = arrivalTimes(), spanMs = 1000): Promise<Row> {
  const outcomes: Outcome[] = []
  for (const at of arrivals) {
    const { allowed, delayMs } = await decide(at)
    outcomes.push({ at, allowed, releasedAt: at + delayMs })
  }
  const released = outcomes.filter((o) => o.allowed).map((o) => o.releasedAt)
  return { name, outcomes, admitted: released.length, largestInOneSecond: largestInAnySpan(released, spanMs) }
}

/** The table printed by the demo; `span` names the span of the last column (default 1 s). */
export function table(rows: readonly Row[], span = '1 s'): string {
  const header = ['algorithm', 'admitted', 'rejected', `most in any ${span}`]
  const lines = rows.map((r) => [
    r.name,
    String(r.admitted),
    String(r.outcomes.length - r.admitted),
    String(r.largestInOneSecond),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)))
  const format = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(' | ')} |`
  return [format(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(format)].join('\n')
}
