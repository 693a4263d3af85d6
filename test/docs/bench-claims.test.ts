import { markdownFiles, read } from './markdown'

// The measured figures: the rows of RESULTS.md's tables (its prose and notes also name targets and old figures).
const results = read('bench/RESULTS.md')
  .split('\n')
  .filter((line) => line.startsWith('|'))
  .join('\n')

/** The section of the root README under `## Benchmarks`, up to the next `## ` heading. */
function benchmarkSection(): string {
  const readme = read('README.md')
  const start = readme.indexOf('\n## Benchmarks\n')
  if (start === -1) throw new Error('README.md has no "## Benchmarks" section')
  const end = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
}

/**
 * The figures a text quotes, as RESULTS.md's tables write them: ratios (`1.09x` and `1.09 times` are `1.09×`, and
 * so is each end of `1.09 to 1.16 times`), rates (`130.9 k/s` is `130.9 k`), microseconds and bytes.
 */
function figures(text: string): string[] {
  const found: string[] = []
  for (const [, value] of text.matchAll(/(\d+(?:\.\d+)?)[x×](?![\w])/g)) found.push(`${value}×`)
  for (const [, from, to] of text.matchAll(/(\d+(?:\.\d+)?)(?: to (\d+(?:\.\d+)?))? times/g)) {
    found.push(`${from}×`, ...(to === undefined ? [] : [`${to}×`]))
  }
  for (const [, value, unit] of text.matchAll(/(\d+(?:\.\d+)?) ?([kM])\/s/g)) found.push(`${value} ${unit}`)
  for (const [, value] of text.matchAll(/(\d+(?:\.\d+)?) (?:µs|bytes)/g)) found.push(value as string)
  return found
}

/** Whether RESULTS.md shows `figure` as a figure of its own (not as the middle of a longer number). */
function shown(figure: string): boolean {
  const escaped = figure.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(?<![\\d.])${escaped}(?![\\d])`).test(results)
}

it('quotes figures in its benchmark section at all (the check below would pass on none)', () => {
  expect(figures(benchmarkSection()).length).toBeGreaterThanOrEqual(10)
})

it.each(figures(benchmarkSection()))('quotes %s, a figure bench/RESULTS.md shows', (figure) => {
  expect(shown(figure)).toBe(true)
})

it('catches the claim that did not reproduce (1.3 to 1.4 times rate-limiter-flexible for a hot key)', () => {
  const claim = "Sluice's memory decisions run at 1.3 to 1.4 times rate-limiter-flexible's for a hot key"
  expect(figures(claim)).toEqual(['1.3×', '1.4×'])
  expect(figures(claim).filter(shown)).toEqual([])
})

it('finds no figure quoted from the bench anywhere in the docs without it in RESULTS.md', () => {
  // Only the figures of sentences that cite the bench: the docs' other ratios come from simulations they run.
  const citing = markdownFiles()
    .filter((path) => !path.startsWith('bench/'))
    .map((path) => read(path))
    .flatMap((text) => text.split(/\n\n+/))
    .filter((paragraph) => /bench\/RESULTS\.md|npm run bench/.test(paragraph))
  for (const paragraph of citing) {
    for (const figure of figures(paragraph)) expect([figure, shown(figure)]).toEqual([figure, true])
  }
})
