import type { Row } from './experiment'
import { PHASES } from './pattern'

const WIDTH = 1000
const LEFT = 170
const RIGHT = 20
const TOP = 60
const ROW_HEIGHT = 56
const SPAN_MS = 6500

/** What a chart of another experiment than the demo's says: its title, phases, window and time span. */
export interface ChartOptions {
  readonly title?: string
  /** The phases labelled with what arrived and what was admitted in each, as [start, end) in ms. */
  readonly phases?: readonly (readonly [number, number])[]
  /** Where the dashed boundaries fall. Default 1 s. */
  readonly windowMs?: number
  /** The time the chart spans. Default 6.5 s. */
  readonly spanMs?: number
}

/**
 * A timeline of the burst experiment: one lane per algorithm, arrivals on top, a green tick for each admitted
 * request, a red cross for each rejected one, and for the queue a blue tick at each departure joined to its
 * arrival. Dashed lines mark the window boundaries, where the fixed window's double burst shows.
 */
export function burstChart(rows: readonly Row[], arrivals: readonly number[], options: ChartOptions = {}): string {
  const {
    title = 'The same 80 requests through each algorithm (limit 10 per 1 s; buckets: 10 at 10/s)',
    phases = PHASES,
    windowMs = 1000,
    spanMs = SPAN_MS,
  } = options
  const x = (ms: number) => LEFT + (ms / spanMs) * (WIDTH - LEFT - RIGHT)
  const height = TOP + (rows.length + 1) * ROW_HEIGHT + 50
  const parts: string[] = []
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="24" font-size="16" font-weight="bold">${title}</text>`,
    `<text x="10" y="44" fill="#555" font-size="12">green: admitted · red ×: rejected · blue: queue departure · dashed: window boundary · a/b: admitted of arrived in a phase · (n) admitted · [m] most in any 1 s</text>`,
  )
  const bottom = TOP + (rows.length + 1) * ROW_HEIGHT
  for (let s = 0; s * windowMs <= spanMs; s++) {
    const at = s * windowMs
    parts.push(
      `<line x1="${x(at)}" y1="${TOP}" x2="${x(at)}" y2="${bottom}" stroke="#999" stroke-dasharray="4 4"/>`,
      `<text x="${x(at)}" y="${bottom + 18}" text-anchor="middle" fill="#333">${at / 1000} s</text>`,
    )
  }
  const lane = (index: number) => TOP + index * ROW_HEIGHT + ROW_HEIGHT / 2
  parts.push(`<text x="10" y="${lane(0) + 4}" font-weight="bold">arrivals (${arrivals.length})</text>`)
  for (const at of arrivals) {
    parts.push(
      `<line x1="${x(at)}" y1="${lane(0) - 12}" x2="${x(at)}" y2="${lane(0) + 12}" stroke="#333" stroke-opacity="0.5"/>`,
    )
  }
  const phaseLabel = (y: number, text: string, [start, end]: readonly [number, number]) =>
    `<text x="${(x(start) + x(end)) / 2}" y="${y}" text-anchor="middle" fill="#333" font-size="11">${text}</text>`
  for (const phase of phases) {
    const count = arrivals.filter((at) => at >= phase[0] && at < phase[1]).length
    parts.push(phaseLabel(lane(0) - 16, `${count} arrive`, phase))
  }
  rows.forEach((row, i) => {
    const y = lane(i + 1)
    for (const phase of phases) {
      const inPhase = row.outcomes.filter((o) => o.at >= phase[0] && o.at < phase[1])
      parts.push(phaseLabel(y - 17, `${inPhase.filter((o) => o.allowed).length}/${inPhase.length}`, phase))
    }
    parts.push(
      `<line x1="${LEFT}" y1="${y - ROW_HEIGHT / 2}" x2="${WIDTH - RIGHT}" y2="${y - ROW_HEIGHT / 2}" stroke="#eee"/>`,
      `<text x="10" y="${y + 4}" font-weight="bold">${row.name}</text>`,
      `<text x="10" y="${y + 20}" fill="#555">(${row.admitted}) [${row.largestInOneSecond}]</text>`,
    )
    for (const o of row.outcomes) {
      if (!o.allowed) {
        const cx = x(o.at)
        const cy = y + 8
        parts.push(
          `<path d="M${cx - 3} ${cy - 3}L${cx + 3} ${cy + 3}M${cx - 3} ${cy + 3}L${cx + 3} ${cy - 3}" stroke="#d33" stroke-width="1.5"/>`,
        )
      } else if (o.releasedAt === o.at) {
        parts.push(
          `<line x1="${x(o.at)}" y1="${y - 14}" x2="${x(o.at)}" y2="${y + 2}" stroke="#1a9641" stroke-width="2"/>`,
        )
      } else {
        parts.push(
          `<line x1="${x(o.at)}" y1="${y - 14}" x2="${x(o.releasedAt)}" y2="${y - 2}" stroke="#3b6fd6" stroke-opacity="0.35"/>`,
          `<line x1="${x(o.releasedAt)}" y1="${y - 14}" x2="${x(o.releasedAt)}" y2="${y + 2}" stroke="#3b6fd6" stroke-width="2"/>`,
        )
      }
    }
  })
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
