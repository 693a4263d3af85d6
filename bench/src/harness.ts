// The shared harness: contenders measured in alternating rounds after a warm-up, summaries (median, min, max),
// ratios paired round by round, targets, and tables rendered as Markdown for the terminal and RESULTS.md alike.

/**
 * Tiny mode (`--tiny` or `SLUICE_BENCH_TINY=1`): every part runs for about a second, so a test can check that the
 * benchmarks still run and produce their tables. Its numbers mean nothing.
 */
const { SLUICE_BENCH_TINY } = process.env

/** Run settings, read by each part when it runs (so a test can switch tiny mode on before running them). */
export const settings = { tiny: process.argv.includes('--tiny') || SLUICE_BENCH_TINY === '1' }

/** One thing measured: `measure` runs it once (one round) and returns its rate (per second) or its amount. */
export interface Contender {
  readonly name: string
  measure(): Promise<number>
}

/** The median, min and max of one contender's rounds, and the rounds themselves in order. */
export interface Summary {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly samples: readonly number[]
}

export interface RoundsOptions {
  /** Measured rounds. */
  readonly rounds: number
  /** Rounds run first and thrown away (JIT, caches, connections). */
  readonly warmup: number
}

/**
 * Runs every contender once per round, alternating: A B C in even rounds and C B A in odd ones, so drift on a noisy
 * machine (a neighbour's load, a GC, thermal state) lands on every contender alike and not always on the last one.
 */
export async function alternate(
  contenders: readonly Contender[],
  { rounds, warmup }: RoundsOptions,
): Promise<Map<string, Summary>> {
  const samples = new Map<string, number[]>(contenders.map((c) => [c.name, []]))
  for (let round = 0; round < warmup + rounds; round++) {
    const order = round % 2 === 0 ? contenders : [...contenders].reverse()
    for (const contender of order) {
      const value = await contender.measure()
      if (round >= warmup) samples.get(contender.name)?.push(value)
    }
  }
  return new Map([...samples].map(([name, values]) => [name, summarize(values)]))
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new Error('nothing to summarize')
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, samples: values }
}

/**
 * A over B, round by round (both ran in the same round, next to each other), summarized: the median of the
 * per-round ratios is steadier than a ratio of medians when the machine's speed drifts between rounds.
 */
export function ratio(a: Summary, b: Summary): Summary {
  const n = Math.min(a.samples.length, b.samples.length)
  const values: number[] = []
  for (let i = 0; i < n; i++) values.push((a.samples[i] as number) / (b.samples[i] as number))
  return summarize(values)
}

/** Looks a contender's summary up, or throws naming it (a typo in a part should fail loudly). */
export function pick(results: Map<string, Summary>, name: string): Summary {
  const summary = results.get(name)
  if (summary === undefined) throw new Error(`no results for ${name}`)
  return summary
}

/**
 * Runs `op` back to back, each awaited, for about `durationMs`, and returns operations per second. The clock is read
 * once per batch, so its cost does not land on the operation being measured. With `per: 'cpu'` the seconds are
 * this process's CPU time (user + system, all its threads) rather than the wall clock's: on a shared machine, time
 * the process spends descheduled while other work runs then counts for nothing, where the wall clock would charge
 * it to whichever contender was running.
 */
export async function opsPerSecond(
  durationMs: number,
  op: (i: number) => Promise<unknown>,
  per: 'wall' | 'cpu' = 'wall',
): Promise<number> {
  const cpuStart = process.cpuUsage()
  const start = performance.now()
  const end = start + durationMs
  let n = 0
  let now = start
  do {
    for (let j = 0; j < 256; j++) await op(n++)
    now = performance.now()
  } while (now < end)
  if (per === 'wall') return n / ((now - start) / 1000)
  const cpu = process.cpuUsage(cpuStart)
  return n / ((cpu.user + cpu.system) / 1e6)
}

/**
 * Like {@link opsPerSecond}, with `inFlight` loops sharing the work, so that many operations wait at once (what a
 * server sees with that many requests in flight).
 */
export async function concurrentOpsPerSecond(
  durationMs: number,
  inFlight: number,
  op: (i: number) => Promise<unknown>,
  per: 'wall' | 'cpu' = 'wall',
): Promise<number> {
  const cpuStart = process.cpuUsage()
  const start = performance.now()
  const end = start + durationMs
  let n = 0
  const worker = async () => {
    while (performance.now() < end) {
      for (let j = 0; j < 16; j++) await op(n++)
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  if (per === 'wall') return n / ((performance.now() - start) / 1000)
  const cpu = process.cpuUsage(cpuStart)
  return n / ((cpu.user + cpu.system) / 1e6)
}

/** How a column's numbers print, and what the smoke test may expect of them. */
/**
 * `share` is a percentage that may be zero (the share of requests rejected); `count` and `micros` may be zero too;
 * `signed` is a difference, of either sign.
 */
export type Kind = 'rate' | 'ratio' | 'percent' | 'share' | 'bytes' | 'count' | 'micros' | 'signed' | 'text'

export interface Column {
  readonly header: string
  readonly kind: Kind
}

export type Cell = string | number

export interface Table {
  readonly title: string
  readonly columns: readonly Column[]
  readonly rows: readonly (readonly Cell[])[]
  readonly notes?: readonly string[]
}

/** One measured figure against its target, for the summary at the top of RESULTS.md. */
export interface TargetCheck {
  readonly what: string
  readonly value: number
  /** How the figure reads: `3.10×`, `96.2%`, a count, bytes or microseconds. */
  readonly kind: 'ratio' | 'percent' | 'count' | 'bytes' | 'micros'
  /** The target as it reads: `≥ 1.00×`, `= 1`. */
  readonly target: string
  readonly passed: boolean
  /** Why the project pursues it, in a few words (the summary's last column). */
  readonly reason: string
}

/** What one part returns: its tables, the targets it checked and a paragraph on how it measured. */
export interface PartResult {
  readonly title: string
  readonly method: string
  readonly tables: readonly Table[]
  readonly targets: readonly TargetCheck[]
}

/** A figure that must reach at least `target`, for `reason`. */
export function atLeast(
  what: string,
  value: number,
  target: number,
  kind: 'ratio' | 'percent',
  reason: string,
): TargetCheck {
  return { what, value, kind, target: `≥ ${format(target, kind)}`, passed: value >= target, reason }
}

/** A figure that must stay at or below `target`, for `reason`. */
export function atMost(
  what: string,
  value: number,
  target: number,
  kind: 'bytes' | 'ratio' | 'micros',
  reason: string,
): TargetCheck {
  return { what, value, kind, target: `≤ ${format(target, kind)}`, passed: value <= target, reason }
}

/** A count that must be exactly `target`, for `reason`. */
export function exactly(what: string, value: number, target: number, reason: string): TargetCheck {
  return { what, value, kind: 'count', target: `= ${target}`, passed: value === target, reason }
}

export function mark(check: TargetCheck): string {
  return check.passed ? 'pass' : 'MISS'
}

export function format(value: Cell, kind: Kind): string {
  if (typeof value === 'string') return value
  switch (kind) {
    case 'rate':
      if (value >= 1e6) return `${(value / 1e6).toFixed(2)} M`
      if (value >= 1e3) return `${(value / 1e3).toFixed(1)} k`
      return value.toFixed(0)
    case 'ratio':
      return `${value.toFixed(2)}×`
    case 'percent':
    case 'share':
      return `${(value * 100).toFixed(1)}%`
    case 'bytes':
      return value.toFixed(0)
    case 'micros':
      return value.toFixed(1)
    case 'signed':
      return `${value >= 0 ? '+' : ''}${value.toFixed(1)}`
    case 'count':
      return Number.isInteger(value) ? String(value) : value.toFixed(3)
    case 'text':
      return String(value)
  }
}

/** A Markdown table with padded columns, readable as it is in a terminal. */
export function renderTable(table: Table): string {
  const cells = table.rows.map((row) => row.map((cell, i) => format(cell, table.columns[i]?.kind ?? 'text')))
  const widths = table.columns.map((column, i) =>
    Math.max(column.header.length, ...cells.map((row) => (row[i] ?? '').length)),
  )
  const line = (row: readonly string[]) =>
    `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(' | ')} |`
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`
  const notes = (table.notes ?? []).map((note) => `\n${note}`).join('\n')
  return (
    [`#### ${table.title}`, '', line(table.columns.map((c) => c.header)), rule, ...cells.map(line)].join('\n') +
    (notes ? `\n${notes}` : '')
  )
}

/** The rate columns every part uses: the median, min and max over the rounds. */
export const RATE_COLUMNS: readonly Column[] = [
  { header: 'median /s', kind: 'rate' },
  { header: 'min /s', kind: 'rate' },
  { header: 'max /s', kind: 'rate' },
]

/** The ratio columns every part uses: the ratio's median, min and max over the rounds, its target and the mark. */
export const RATIO_COLUMNS: readonly Column[] = [
  { header: 'median', kind: 'ratio' },
  { header: 'min', kind: 'ratio' },
  { header: 'max', kind: 'ratio' },
  { header: 'target', kind: 'text' },
  { header: '', kind: 'text' },
]
