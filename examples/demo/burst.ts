// npm run demo: the burst experiment over real HTTP. The same 80 arrivals (see pattern.ts) are sent to an Express
// app limited by @sluice/express on the embedded memory store: one route per algorithm, limit 10 per 1 s (buckets:
// capacity 10, 10 per second), and a leaky-bucket queue. Time is virtual, so the run is instant and the same every
// time. Prints the table and one admitted and one rejected response, and writes docs/burst.svg.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { burstChart } from './chart'
import { ALGORITHMS, ORIGIN, type Row, run, table } from './experiment'
import { type Exchange, startDemoServer } from './http'
import { arrivalTimes } from './pattern'

function show(title: string, exchange: Exchange): string {
  const shown = [
    'content-type',
    'cache-control',
    'retry-after',
    'ratelimit-policy',
    'ratelimit',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
  ]
  const lines = shown
    .filter((name) => exchange.headers[name] !== undefined)
    .map((name) => `  ${name}: ${exchange.headers[name]}`)
  return [`${title}: HTTP ${exchange.status}`, ...lines, `  ${exchange.body}`].join('\n')
}

async function main(): Promise<void> {
  const server = await startDemoServer()
  try {
    const rows: Row[] = []
    for (const algorithm of ALGORITHMS) rows.push(await run(algorithm, server.overHttp(algorithm)))
    rows.push(await run('leaky-queue', server.overHttp('leaky-queue')))
    console.log(
      'The burst experiment over HTTP: 80 requests to an Express app, limit 10 per second (buckets: 10 at 10/s)\n',
    )
    console.log(table(rows))
    console.log('\nleaky-queue admits by delaying: its column counts departures, not arrivals.')

    // One admitted and one rejected response of the sliding window, from a fresh second.
    server.time.now = ORIGIN + 60_000
    const admitted = await server.send('/sliding-window')
    let rejected = admitted
    for (let i = 0; i < 20 && rejected.status === 200; i++) rejected = await server.send('/sliding-window')
    console.log(`\n${show('An admitted response', admitted)}\n\n${show('A rejected response', rejected)}`)

    const out = join(__dirname, '..', '..', 'docs', 'burst.svg')
    mkdirSync(join(out, '..'), { recursive: true })
    writeFileSync(out, burstChart(rows, arrivalTimes()))
    console.log(`\nChart written to ${out}`)
  } finally {
    await server.close()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
