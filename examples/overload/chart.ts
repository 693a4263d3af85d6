import type { Timeline } from './scenarios'

const WIDTH = 1000
const HEIGHT = 420
const LEFT = 70
const RIGHT = 30
const TOP = 70
const BOTTOM = 60

/**
 * Goodput over time through an overload, with and without `shedLoad`: the offered load as a grey step, the answers
 * that reached their clients in time as a red line (no shedding) and a green one (shedding), per half second.
 */
export function overloadChart(timeline: Timeline, capacity: number): string {
  const spanMs = timeline.offered.at(-1)?.untilMs ?? 1
  const top = Math.max(...timeline.offered.map((p) => p.perSecond)) * 1.1
  const x = (ms: number) => LEFT + (ms / spanMs) * (WIDTH - LEFT - RIGHT)
  const y = (perSecond: number) => TOP + (1 - perSecond / top) * (HEIGHT - TOP - BOTTOM)
  const line = (series: readonly number[]) =>
    series
      .map((value, i) => `${i === 0 ? 'M' : 'L'}${x((i + 0.5) * timeline.bucketMs).toFixed(1)} ${y(value).toFixed(1)}`)
      .join('')
  let offered = ''
  let from = 0
  for (const phase of timeline.offered) {
    offered += `${from === 0 ? 'M' : 'L'}${x(from)} ${y(phase.perSecond)}L${x(phase.untilMs)} ${y(phase.perSecond)}`
    from = phase.untilMs
  }
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
    '<rect width="100%" height="100%" fill="#ffffff"/>',
    `<text x="10" y="24" font-size="16" font-weight="bold">Goodput through an overload: a service of ${capacity}/s (10 at a time, 100 ms each), clients that give up after 2 s</text>`,
    '<text x="10" y="46" fill="#555" font-size="12">grey: offered load · red: answers in time without shedding · green: answers in time with shedLoad({ maxInFlight: 10 }) · per 0.5 s</text>',
  ]
  for (let perSecond = 0; perSecond <= top; perSecond += 50) {
    parts.push(
      `<line x1="${LEFT}" y1="${y(perSecond)}" x2="${WIDTH - RIGHT}" y2="${y(perSecond)}" stroke="#eee"/>`,
      `<text x="${LEFT - 8}" y="${y(perSecond) + 4}" text-anchor="end" fill="#333">${perSecond}/s</text>`,
    )
  }
  for (let s = 0; s * 1000 <= spanMs; s += 5) {
    parts.push(`<text x="${x(s * 1000)}" y="${HEIGHT - BOTTOM + 20}" text-anchor="middle" fill="#333">${s} s</text>`)
  }
  parts.push(
    `<line x1="${LEFT}" y1="${y(capacity)}" x2="${WIDTH - RIGHT}" y2="${y(capacity)}" stroke="#333" stroke-dasharray="4 4"/>`,
    `<text x="${WIDTH - RIGHT}" y="${y(capacity) - 6}" text-anchor="end" fill="#333">capacity</text>`,
    `<path d="${offered}" fill="none" stroke="#999" stroke-width="2"/>`,
    `<path d="${line(timeline.without)}" fill="none" stroke="#d33" stroke-width="2"/>`,
    `<path d="${line(timeline.with)}" fill="none" stroke="#1a9641" stroke-width="2.5"/>`,
    '</svg>',
  )
  return `${parts.join('\n')}\n`
}
