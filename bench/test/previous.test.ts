// The peers' figures beside the previous run's: parsed back from a rendered report, and a peer that moved marked.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type PartResult, RATE_COLUMNS, renderTable, type Table } from '../src/harness'
import { machine, renderReport } from '../src/index'
import { parseRate, peersAgainstPrevious, rateFigures, runDate } from '../src/previous'

function ratesTable(peer: number, sluice: number): Table {
  return {
    title: 'Decisions per second through Redis',
    columns: [{ header: 'in flight', kind: 'text' }, { header: 'contender', kind: 'text' }, ...RATE_COLUMNS],
    rows: [
      ['64', 'sluice fixed-window', sluice, sluice * 0.9, sluice * 1.1],
      ['64', 'express-rate-limit + rate-limit-redis', peer, peer * 0.9, peer * 1.1],
      ['256', 'rate-limiter-flexible', 41_700, 39_900, 68_100],
    ],
  }
}

const part = (table: Table): PartResult => ({
  title: '3. Redis',
  method: 'alternating rounds',
  tables: [table],
  targets: [],
})

test('a rate reads back as format wrote it', () => {
  expect(parseRate('5.56 M')).toBe(5_560_000)
  expect(parseRate('49.7 k')).toBe(49_700)
  expect(parseRate('812')).toBe(812)
  expect(parseRate('1.40×')).toBeUndefined()
  expect(parseRate('')).toBeUndefined()
})

test('the committed RESULTS.md is read: its peers by table and label, and its date', () => {
  const committed = readFileSync(join(__dirname, '..', 'RESULTS.md'), 'utf8')
  const figures = rateFigures(committed)
  // Every rate row of every part's tables (the tables without a median, such as the targets, are left out).
  expect(figures.size).toBeGreaterThan(30)
  expect(runDate(committed)).toMatch(/^\d{4}-\d\d-\d\dT/)
  const redisPeer = [...figures].find(
    ([key]) => key.startsWith('Decisions per second through Redis | 64 |') && key.includes('rate-limit-redis'),
  )
  expect(redisPeer?.[1]).toBeGreaterThan(1000)
  expect([...figures.keys()].some((key) => key.startsWith('Targets'))).toBe(false)
})

test('a peer that moved 3x is marked MOVED, one that held is not, and Sluice is not listed', () => {
  const previous = `Run started 2026-12-02T00:24:42.068Z on a machine.\n\n${renderTable(ratesTable(49_700, 130_900))}\n`
  const section = peersAgainstPrevious([part(ratesTable(170_900, 202_600))], previous)
  const lines = section.split('\n')
  const moved = lines.find((line) => line.includes('express-rate-limit + rate-limit-redis'))
  expect(moved).toMatch(/170\.9 k \|\s+49\.7 k \|\s+3\.44× \| MOVED \|$/)
  const held = lines.find((line) => line.includes('rate-limiter-flexible'))
  expect(held).toMatch(/41\.7 k \|\s+41\.7 k \|\s+1\.00× \|\s+\|$/)
  expect(section).not.toContain('sluice fixed-window')
  expect(section).toContain('2 peer figures beside the run of 2026-12-02T00:24:42.068Z: 1 moved more than 1.5x')
})

test('a peer within 1.5x either way is not marked; a peer the previous run lacked is counted apart', () => {
  const previous = renderTable({ ...ratesTable(100_000, 1), rows: ratesTable(100_000, 1).rows.slice(0, 2) })
  const section = peersAgainstPrevious([part(ratesTable(67_000, 1))], previous)
  expect(section).not.toContain('MOVED')
  expect(section).toContain('1 peer figures of this run had none in the previous one.')
  expect(peersAgainstPrevious([part(ratesTable(66_000, 1))], previous)).toContain('MOVED')
})

test('without a previous report the section says so, and the report carries it after the targets', () => {
  expect(peersAgainstPrevious([part(ratesTable(1, 1))], undefined)).toContain('No previous bench/RESULTS.md')
  const report = renderReport(machine('7.0.15'), [part(ratesTable(1, 1))], '', undefined)
  expect(report.indexOf('## Peers against the previous run')).toBeGreaterThan(report.indexOf('#### Targets'))
  expect(report.indexOf('## Peers against the previous run')).toBeLessThan(report.indexOf('## 3. Redis'))
})
