// The playground in a real browser: Debian's headless Chromium loads the built page (the real core bundled in),
// with no console error; the 80-request experiment shows the table `npm run demo` prints, and the controls re-run it.
import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { ALGORITHMS, inProcess, run, table } from '../../examples/demo/experiment'
import { launchChromium } from '../../scripts/chromium'
import { buildPlayground, servePlayground } from '../../scripts/playground'

// Page-side conditions, as text: the test's own types know no DOM.
const runsDone = (runs: number) => `document.body.dataset.runs === '${runs}'`

let out: string
let server: Server
let url: string
let browser: Browser
let page: Page
const problems: string[] = []

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'sluice-playground-'))
  await buildPlayground(out)
  ;({ server, url } = await servePlayground(out))
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1100, height: 1400 } })
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`${message.type()}: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  await page.goto(url)
  await page.waitForFunction(runsDone(1))
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => server?.close(resolve))
  rmSync(out, { recursive: true, force: true })
})

/** The chart's SVG, after the page has run `runs` experiments. */
async function chartAfter(runs: number): Promise<string> {
  await page.waitForFunction(runsDone(runs))
  return page.locator('#chart').innerHTML()
}

test('loads with no console error, and shows the table npm run demo prints for the 80-request experiment', async () => {
  const rows = []
  for (const algorithm of [...ALGORITHMS, 'leaky-queue' as const]) rows.push(await run(algorithm, inProcess(algorithm)))
  expect(await page.locator('#table').textContent()).toBe(table(rows))
  expect(await page.locator('#chart svg').count()).toBe(1)
  expect(problems).toEqual([])
})

test('changing the limit re-runs the experiment: the table and the chart change as the core decides', async () => {
  const before = await chartAfter(1)
  await page.locator('#limit').fill('5')
  await page.locator('#limit').dispatchEvent('change')
  const after = await chartAfter(2)
  expect(after).not.toBe(before)
  const rows = []
  const settings = { limit: 5, windowMs: 1000, cost: 1 }
  for (const algorithm of [...ALGORITHMS, 'leaky-queue' as const]) {
    rows.push(await run(algorithm, inProcess(algorithm, settings)))
  }
  expect(await page.locator('#table').textContent()).toBe(table(rows))
  expect(after).toContain('limit 5 per 1 s')
  expect(problems).toEqual([])
})

test('a burst straddling a window boundary: the fixed window admits twice the limit in one window span', async () => {
  await page.locator('#limit').fill('10')
  await page.locator('#pattern').selectOption('straddle')
  await chartAfter(3)
  const text = (await page.locator('#table').textContent()) ?? ''
  const fixed = text.split('\n').find((line) => line.startsWith('| fixed-window'))
  const log = text.split('\n').find((line) => line.startsWith('| sliding-log'))
  expect(fixed?.split('|').map((c) => c.trim())).toEqual(['', 'fixed-window', '20', '0', '20', ''])
  expect(log?.split('|').map((c) => c.trim())).toEqual(['', 'sliding-log', '10', '10', '10', ''])
})

test('the overload case: goodput with shedding beats goodput without it', async () => {
  await page.locator('#load').selectOption('4')
  await page.locator('#run-overload').click()
  await page.waitForFunction("document.body.dataset.overload === '4'", undefined, { timeout: 60_000 })
  const text = (await page.locator('#overload').textContent()) ?? ''
  const cells = (text.split('\n')[2] ?? '').split('|').map((c) => c.trim())
  const goodput = (cell: string | undefined) => Number(/^([\d.]+)\/s/.exec(cell ?? '')?.[1])
  expect(cells[1]).toBe('4x (400/s)')
  expect(goodput(cells[3])).toBeGreaterThan(goodput(cells[2]))
  expect(await page.locator('#overload-chart svg').count()).toBe(1)
  expect(problems).toEqual([])
}, 90_000)
