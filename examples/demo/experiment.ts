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

/** Limits one algorithm in process, on a memory store whose clock is the experiment's virtual time. */
export function inProcess(algorithm: AlgorithmName | 'leaky-queue'): Decide {
  let now = ORIGIN
  const store = new MemoryStore({ clock: () => now })
  const queue = algorithm === 'leaky-queue'
  const limiter = createLimiter({
    algorithm: queue ? 'leaky-bucket' : algorithm,
    limit: LIMIT,
    window: WINDOW_MS,
    store,
  })
  return async function decide(at) {
    now = ORIGIN + at
    const decision = queue ? await limiter.enqueue('client') : await limiter.consume('client')
    return { allowed: decision.allowed, delayMs: decision.delayMs }
  }
}

/** Sends the 80 arrivals through `decide`, in order, and sums up. */
export async function run(name: string, decide: Decide): Promise<Row> {
  const outcomes: Outcome[] = []
  for (const at of arrivalTimes()) {
    const { allowed, delayMs } = await decide(at)
    outcomes.push({ at, allowed, releasedAt: at + delayMs })
  }
  const released = outcomes.filter((o) => o.allowed).map((o) => o.releasedAt)
  return { name, outcomes, admitted: released.length, largestInOneSecond: largestInAnySpan(released) }
}

/** The table printed by the demo. */
export function table(rows: readonly Row[]): string {
  const header = ['algorithm', 'admitted', 'rejected', 'most in any 1 s']
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
