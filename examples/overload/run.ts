// npm run demo:overload: the overload experiments on the memory store, on virtual time (a few seconds, the same
// every run). Prints the goodput table and the other findings, and writes docs/overload.svg.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { overloadChart } from './chart'
import { findings, goodputTable, neighbourTable, runExperiments } from './report'
import { CAPACITY } from './scenarios'

async function main(): Promise<void> {
  const report = await runExperiments()
  console.log(
    `A service of ${CAPACITY}/s (10 at a time, 100 ms each, an unbounded FIFO in front), open-loop clients that ` +
      `give up after 2 s, shedLoad({ maxInFlight: 10 }); unloaded p99 ${Math.round(report.unloadedP99Ms)} ms.\n`,
  )
  console.log(goodputTable(report))
  console.log(
    `\nNoisy neighbour: 30 small tenants at 1/s each and one at 200/s, shedLoad({ maxInFlight: 10, queue: 100, ` +
      `maxWait: '1s', tenant }); small tenants steady (Poisson), bursty (5 at once every 5 s) or in step (all 30 in ` +
      `the same instant every second).\n`,
  )
  console.log(neighbourTable(report))
  console.log(`\n${findings(report)}`)
  const out = process.argv[2] ?? join(__dirname, '..', '..', 'docs', 'overload.svg')
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, overloadChart(report.timeline, CAPACITY))
  console.log(`\nChart written to ${out}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
