// Fair shedding over real HTTP (Express): 30 small tenants at 1/s each that fire in the same instant every second,
// and one big tenant at 200/s, in front of a dependency of 10 at a time, 100 ms each (100/s). The shedder and the
// handler run on virtual time (shedLoad's `timers`), and the clock moves on only once every request sent has
// reached its place (in the handler, in line, or answered), so the run is the same on a busy machine as on an idle
// one. Before the fix the small tenants' queues were judged standing after 100 ms and shed: 33% of them served.
import { Agent, createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { shedLoad } from '@sluice/express'
import express from 'express'
import { seededRandom, VirtualTime } from '../../examples/overload/virtual-time'

jest.setTimeout(180_000)

interface Sent {
  readonly tenant: string
  readonly arrivedAt: number
  status?: number
  answeredAt?: number
}

const SECONDS = 6
const FROM_MS = 1000

test('small tenants firing in the same instant are all served in time, and goodput stays at capacity', async () => {
  const time = new VirtualTime()
  const app = express()
  const shed = shedLoad({
    maxInFlight: 10,
    queue: 100,
    maxWait: '1s',
    tenant: (req) => req.get('x-tenant') ?? '',
    timers: time,
  })
  app.use(shed)
  let inHandler = 0
  app.get('/', (_req, res) => {
    inHandler++
    time.setTimeout(() => {
      inHandler--
      res.json({ ok: true })
    }, 100)
  })
  const server: Server = createServer(app)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const agent = new Agent({ keepAlive: true, maxSockets: 256 })
  const sent: Sent[] = []
  let answered = 0
  const send = (tenant: string) => {
    const record: Sent = { tenant, arrivedAt: time.now() }
    sent.push(record)
    const req = request({ host: '127.0.0.1', port, path: '/', agent, headers: { 'x-tenant': tenant } }, (res) => {
      res.resume()
      res.on('end', () => {
        record.status = res.statusCode ?? 0
        record.answeredAt = time.now()
        answered++
      })
    })
    req.end()
  }
  try {
    const random = seededRandom(7)
    for (let at = 0; at < SECONDS * 1000; at += (-Math.log(1 - random()) * 1000) / 200) time.at(at, () => send('big'))
    for (let second = 0; second < SECONDS; second++) {
      for (let i = 0; i < 30; i++) time.at(second * 1000 + 500, () => send(`small-${i}`))
    }
    // Settled: every request not answered yet is in the handler or in line, and every finished one gave its slot back.
    const settled = () =>
      sent.length - answered === inHandler + shed.shedder.waiting && shed.shedder.inFlight === inHandler
    await time.runUntilSettled(SECONDS * 1000 + 2000, () => !settled())
  } finally {
    agent.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  const measured = sent.filter((r) => r.arrivedAt >= FROM_MS && r.arrivedAt < SECONDS * 1000)
  const inTime = (r: Sent) => r.status === 200 && (r.answeredAt as number) - r.arrivedAt <= 2000
  const small = new Map<string, { arrived: number; served: number }>()
  for (const r of measured.filter((m) => m.tenant !== 'big')) {
    const counts = small.get(r.tenant) ?? { arrived: 0, served: 0 }
    counts.arrived++
    if (inTime(r)) counts.served++
    small.set(r.tenant, counts)
  }
  expect(small.size).toBe(30)
  const worst = Math.min(...[...small.values()].map((c) => c.served / c.arrived))
  const goodput =
    sent.filter((r) => inTime(r) && (r.answeredAt as number) >= FROM_MS && (r.answeredAt as number) < SECONDS * 1000)
      .length /
    (SECONDS - FROM_MS / 1000)
  console.log(`in-step over HTTP: worst small tenant ${(worst * 100).toFixed(0)}% served, goodput ${goodput}/s`)
  expect(worst).toBeGreaterThanOrEqual(0.99)
  expect(goodput).toBeGreaterThanOrEqual(95)
})
