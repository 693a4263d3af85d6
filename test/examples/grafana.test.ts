// examples/prometheus/grafana-dashboard.json charts the metrics of examples/prometheus: every query of every panel
// names metrics that the example's GET /metrics exports (a renamed metric would leave a panel empty without a word),
// and every metric it exports is on the dashboard.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../examples/prometheus/app'
import { serve } from './scrape'

interface Panel {
  readonly id: number
  readonly type: string
  readonly title: string
  readonly targets?: readonly { readonly expr?: string }[]
  readonly panels?: readonly Panel[]
}

const dashboard = JSON.parse(
  readFileSync(join(__dirname, '../../examples/prometheus/grafana-dashboard.json'), 'utf8'),
) as { readonly title: string; readonly panels: readonly Panel[] }

/** Every panel, those inside collapsed rows too. */
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])])
const charts = panels.filter((panel) => panel.type !== 'row')

/** The series names a PromQL query reads: identifiers that are not followed by `(` (functions) nor inside quotes. */
function metricsOf(expr: string): string[] {
  const unquoted = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')
  const names = [...unquoted.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?!\s*\()/g)].map((match) => match[0])
  return names.filter((name) => name.startsWith('sluice_'))
}

/** The series the example exports, from the `# TYPE` lines of a scrape: a histogram is its _bucket, _sum, _count. */
async function exported(): Promise<Set<string>> {
  const { app, close } = createApp()
  const server = await serve(app)
  try {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    const names = new Set<string>()
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`)
      else names.add(name as string)
    }
    return names
  } finally {
    close()
    await server.close()
  }
}

test('the dashboard has charts, each with a query, and distinct panel ids', () => {
  expect(charts.length).toBeGreaterThan(5)
  for (const chart of charts) expect({ [chart.title]: chart.targets?.length ?? 0 }).not.toEqual({ [chart.title]: 0 })
  expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length)
})

test('every query of every panel names only metrics the example exports, at least one each', async () => {
  const names = await exported()
  const unknown = charts.flatMap((chart) =>
    (chart.targets ?? []).flatMap((target) => {
      const metrics = metricsOf(target.expr ?? '')
      if (metrics.length === 0) return [`${chart.title}: "${target.expr}" names no sluice metric`]
      return metrics.filter((metric) => !names.has(metric)).map((metric) => `${chart.title}: ${metric}`)
    }),
  )
  expect(unknown).toEqual([])
})

test('every metric the example exports is on the dashboard', async () => {
  const charted = new Set(charts.flatMap((chart) => (chart.targets ?? []).flatMap((t) => metricsOf(t.expr ?? ''))))
  const names = [...(await exported())].filter((name) => !name.endsWith('_sum'))
  // A histogram is charted by its buckets (quantiles) and count (rate of decisions); its _sum adds nothing here.
  expect(names.filter((name) => !charted.has(name))).toEqual([])
})

test('the reader of queries finds metrics, not functions, labels or label values', () => {
  expect(
    metricsOf('histogram_quantile(0.99, sum by (le, limiter) (rate(sluice_store_latency_seconds_bucket[5m])))'),
  ).toEqual(['sluice_store_latency_seconds_bucket'])
  expect(metricsOf('sum(rate(sluice_requests_total{outcome="sluice_x"}[1m])) / sum(sluice_shed_limit)')).toEqual([
    'sluice_requests_total',
    'sluice_shed_limit',
  ])
})
