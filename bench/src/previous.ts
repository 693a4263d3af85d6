// The peers' figures of this run beside the previous run's (the bench/RESULTS.md it replaces): a peer that moved
// several times over between two runs says the machine or the method changed, and every ratio against it with them.
// A run on a busy machine once measured express-rate-limit + rate-limit-redis at 49.7k decisions/s; an idle one
// measures it at 170.9k/s, and the 2.21x Sluice had over it was that difference.
import { type Column, format, type PartResult, renderTable, type Table } from './harness'

/** The libraries the bench measures Sluice against: a row whose label names one of them is a peer's. */
export const PEERS: readonly string[] = [
  'rate-limiter-flexible',
  'express-rate-limit',
  'rate-limit-redis',
  'koa-ratelimit',
  '@fastify/rate-limit',
]

/** A peer moved when its figure changed by more than this factor either way between the two runs. */
export const MOVED_FACTOR = 1.5

/** The column every rate table has: the median over the rounds. */
const MEDIAN = 'median /s'

/** A rate as `format` writes it (`5.56 M`, `49.7 k`, `812`), as a number; undefined for anything else. */
export function parseRate(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(?: ([kM]))?$/.exec(text.trim())
  if (match === null) return undefined
  const scale = match[2] === 'M' ? 1e6 : match[2] === 'k' ? 1e3 : 1
  return Number(match[1]) * scale
}

/** `table title | label cells`: how a row is known in both runs (its cells before the median, joined). */
function rowKey(title: string, label: readonly string[]): string {
  return [title, ...label].join(' | ')
}

const isPeer = (label: readonly string[]) => label.some((cell) => PEERS.some((peer) => cell.includes(peer)))

/** The date a report's run started at (its `Run started <ISO date>` line), if it has one. */
export function runDate(markdown: string): string | undefined {
  return /^Run started (\S+)/m.exec(markdown)?.[1]
}

/**
 * Every median rate of a rendered report, by {@link rowKey}: the rows of each `#### title` table that has a
 * `median /s` column, labelled by the cells before it.
 */
export function rateFigures(markdown: string): Map<string, number> {
  const figures = new Map<string, number>()
  let title: string | undefined
  let medianAt = -1
  for (const line of markdown.split('\n')) {
    if (line.startsWith('#### ')) {
      title = line.slice(5).trim()
      medianAt = -1
      continue
    }
    if (title === undefined || !line.startsWith('|')) continue
    // `| a | b |`: the cells between the outer bars (renderTable writes every row that way).
    const cells = line
      .trimEnd()
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim())
    if (medianAt === -1) {
      medianAt = cells.indexOf(MEDIAN)
      if (medianAt === -1) title = undefined // a table without rates
      continue
    }
    if (cells.every((cell) => /^:?-+:?$/.test(cell))) continue // the rule under the header
    const rate = parseRate(cells[medianAt] ?? '')
    if (rate !== undefined) figures.set(rowKey(title, cells.slice(0, medianAt)), rate)
  }
  return figures
}

/** Each peer row of this run's rate tables: its key, table, label and median. */
function peerRates(parts: readonly PartResult[]): { key: string; table: string; label: string[]; now: number }[] {
  return parts.flatMap((part) =>
    part.tables.flatMap((table: Table) => {
      const medianAt = table.columns.findIndex((column: Column) => column.header === MEDIAN)
      if (medianAt === -1) return []
      return table.rows.flatMap((row) => {
        const label = row.slice(0, medianAt).map((cell, i) => format(cell, table.columns[i]?.kind ?? 'text'))
        const now = row[medianAt]
        if (!isPeer(label) || typeof now !== 'number') return []
        return [{ key: rowKey(table.title, label), table: table.title, label, now }]
      })
    }),
  )
}

/**
 * The section that puts each peer's median beside the previous report's: the two figures, their ratio, and
 * `MOVED` when it is off by more than {@link MOVED_FACTOR}. `previous` is that report's Markdown (undefined: none).
 */
export function peersAgainstPrevious(parts: readonly PartResult[], previous: string | undefined): string {
  const heading = '## Peers against the previous run'
  if (previous === undefined) return `${heading}\n\nNo previous bench/RESULTS.md to compare with.`
  const before = rateFigures(previous)
  const peers = peerRates(parts)
  const rows = peers.flatMap(({ key, table, label, now }) => {
    const then = before.get(key)
    if (then === undefined) return []
    const ratio = now / then
    const moved = ratio > MOVED_FACTOR || ratio < 1 / MOVED_FACTOR
    return [[table, label.join(', '), now, then, ratio, moved ? 'MOVED' : '']]
  })
  const movedCount = rows.filter((row) => row[5] === 'MOVED').length
  const unmatched = peers.length - rows.length
  const table: Table = {
    title: `${rows.length} peer figures beside the run of ${runDate(previous) ?? 'an unknown date'}: ${movedCount} moved more than ${MOVED_FACTOR}x`,
    columns: [
      { header: 'table', kind: 'text' },
      { header: 'peer', kind: 'text' },
      { header: 'now /s', kind: 'rate' },
      { header: 'previous /s', kind: 'rate' },
      { header: 'now / previous', kind: 'ratio' },
      { header: '', kind: 'text' },
    ],
    rows,
    notes: unmatched > 0 ? [`${unmatched} peer figures of this run had none in the previous one.`] : [],
  }
  const why =
    'A peer measured several times faster or slower than in the previous run says the machine or the method ' +
    'changed, and every ratio against that peer with it: read those ratios with that in mind.'
  return `${heading}\n\n${why}\n\n${renderTable(table)}`
}
