// The playground's page: the burst experiment and the overload case of the demos, run in the browser on the real
// core (bundled from packages/core/src by scripts/playground.ts), on a virtual clock.
import type { AlgorithmName } from '@sluice/core'
import { burstChart } from '../examples/demo/chart'
import { DEMO_SETTINGS, inProcess, type Row, run, table } from '../examples/demo/experiment'
import { PATTERNS, PHASES } from '../examples/demo/pattern'
import { overloadChart } from '../examples/overload/chart'
import { table as markdownTable } from '../examples/overload/report'
import { CAPACITY, goodputAt, overloadTimeline } from '../examples/overload/scenarios'

type Lane = AlgorithmName | 'leaky-queue'
type PatternName = keyof typeof PATTERNS

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const numberOf = (id: string, fallback: number) => {
  const value = Math.floor(Number(element<HTMLInputElement>(id).value))
  return Number.isFinite(value) && value >= 1 ? value : fallback
}
const spanLabel = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`)

/** The experiment the controls describe, run through every chosen algorithm. */
async function experiment(): Promise<void> {
  const settings = {
    limit: numberOf('limit', DEMO_SETTINGS.limit),
    windowMs: numberOf('window', DEMO_SETTINGS.windowMs),
    cost: numberOf('cost', DEMO_SETTINGS.cost),
  }
  const pattern = element<HTMLSelectElement>('pattern').value as PatternName
  const lanes = [...document.querySelectorAll<HTMLInputElement>('#algorithms input:checked')].map(
    (i) => i.value as Lane,
  )
  const arrivals = PATTERNS[pattern](settings.limit, settings.windowMs)
  const rows: Row[] = []
  for (const lane of lanes) rows.push(await run(lane, inProcess(lane, settings), arrivals, settings.windowMs))
  element('table').textContent = table(rows, spanLabel(settings.windowMs))
  const last = Math.max(...arrivals, ...rows.flatMap((r) => r.outcomes.map((o) => o.releasedAt)))
  const spanMs = Math.ceil((last + 1) / settings.windowMs + 0.5) * settings.windowMs
  element('chart').innerHTML = burstChart(rows, arrivals, {
    title: `${arrivals.length} requests through each algorithm (limit ${settings.limit} per ${spanLabel(settings.windowMs)}, cost ${settings.cost})`,
    phases: pattern === 'experiment' ? PHASES : [[0, spanMs]],
    windowMs: settings.windowMs,
    spanMs,
  })
  document.body.dataset['runs'] = String(Number(document.body.dataset['runs'] ?? 0) + 1)
}

/** Goodput at the chosen load, with and without shedding, and the timeline of the 4x case. */
async function overload(): Promise<void> {
  const multiple = Number(element<HTMLSelectElement>('load').value)
  element('overload').textContent = 'running…'
  const row = await goodputAt(multiple)
  const perSecond = (x: number) => `${x.toFixed(1)}/s (${Math.round((x / CAPACITY) * 100)}%)`
  element('overload').textContent = markdownTable(
    ['offered load', 'goodput, no shedding', 'goodput, shedLoad', 'shed'],
    [
      [
        `${multiple}x (${multiple * CAPACITY}/s)`,
        perSecond(row.without.goodput),
        perSecond(row.with.goodput),
        `${Math.round(row.with.shedFraction * 100)}%`,
      ],
    ],
  )
  element('overload-chart').innerHTML = overloadChart(await overloadTimeline(), CAPACITY)
  document.body.dataset['overload'] = String(multiple)
}

function report(error: unknown): void {
  const box = element('table')
  box.classList.add('error')
  box.textContent = String(error)
  throw error
}

for (const id of ['limit', 'window', 'cost', 'pattern'])
  element(id).addEventListener('change', () => experiment().catch(report))
for (const box of document.querySelectorAll('#algorithms input'))
  box.addEventListener('change', () => experiment().catch(report))
element('run-overload').addEventListener('click', () => overload().catch(report))
experiment().catch(report)
