// The benchmarks in tiny mode, so they cannot rot: every part runs for about a second and must produce its tables
// with finite numbers. Nothing here is about speed. The child processes (HTTP servers, memory) load the built
// packages, so this needs `npm run build` first (as `npm test` does).
import { type PartResult, settings, type Table } from '../src/harness'
import { machine, onlyParts, PARTS, renderReport } from '../src/index'

jest.setTimeout(120_000)
settings.tiny = true

/** Every number in the table is finite; rates, ratios and sizes are above zero (a count may be zero). */
function expectSound(table: Table): void {
  expect(table.rows.length).toBeGreaterThan(0)
  for (const row of table.rows) {
    expect(row).toHaveLength(table.columns.length)
    row.forEach((cell, i) => {
      const kind = table.columns[i]?.kind
      if (kind === 'text') return
      expect(typeof cell).toBe('number')
      const value = cell as number
      expect(Number.isFinite(value)).toBe(true)
      if (kind === 'signed') return
      if (kind === 'count' || kind === 'micros' || kind === 'share') expect(value).toBeGreaterThanOrEqual(0)
      else expect(value).toBeGreaterThan(0)
    })
  }
}

const results: PartResult[] = []

describe.each(Object.keys(PARTS))('bench part %s in tiny mode', (name) => {
  it('produces its tables with finite positive numbers', async () => {
    const run = PARTS[name] as () => Promise<PartResult>
    const result = await run()
    results.push(result)
    expect(result.tables.length).toBeGreaterThan(0)
    result.tables.forEach(expectSound)
    for (const target of result.targets) expect(Number.isFinite(target.value)).toBe(true)
  })
})

it('renders one report with every part and the machine it ran on', () => {
  const report = renderReport(machine('7.0.0'), results)
  for (const result of results) expect(report).toContain(result.title)
  expect(report).toContain('Node v')
})

test('--only picks parts by name, with = or a space, and refuses a name that is no part', () => {
  expect(onlyParts(['node', 'index.ts'])).toBeUndefined()
  expect(onlyParts(['node', 'index.ts', '--only=redis'])).toEqual(['redis'])
  expect(onlyParts(['node', 'index.ts', '--only', 'core,http'])).toEqual(['core', 'http'])
  expect(() => onlyParts(['node', 'index.ts', '--only=rediss'])).toThrow('bench: --only takes parts among core, http')
  expect(() => onlyParts(['node', 'index.ts', '--only'])).toThrow('bench: --only takes parts among')
})
