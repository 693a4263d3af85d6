// npm run demo: the burst experiment. The same 80 arrivals (see pattern.ts) go through all five algorithms and the
// leaky bucket as a queue, with limit 10 per 1 s (buckets: capacity 10, 10 per second), on the embedded memory
// store. Time is virtual, so the run is instant and the same every time. Prints a table, writes docs/burst.svg.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { burstChart } from './chart'
import { ALGORITHMS, inProcess, type Row, run, table } from './experiment'
import { arrivalTimes } from './pattern'

async function main(): Promise<void> {
  const rows: Row[] = []
  for (const algorithm of ALGORITHMS) rows.push(await run(algorithm, inProcess(algorithm)))
  rows.push(await run('leaky-queue', inProcess('leaky-queue')))
  console.log('The burst experiment: 80 requests, limit 10 per second (buckets: 10 at 10/s)\n')
  console.log(table(rows))
  console.log('\nleaky-queue admits by delaying: its column counts departures, not arrivals.')
  const out = join(__dirname, '..', '..', 'docs', 'burst.svg')
  mkdirSync(join(out, '..'), { recursive: true })
  writeFileSync(out, burstChart(rows, arrivalTimes()))
  console.log(`\nChart written to ${out}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
