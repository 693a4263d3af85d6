// Poisoning the adaptive ceiling over real HTTP (Express), with the cheap requests: the 429s of a rateLimit
// mounted after shedLoad. Legitimate traffic is 400/s (Poisson) at 10 ms each on a dependency of 8 at a time
// (800/s); a scanner sends 3 000/s in 150 ms pulses every second, every one of them refused by the rateLimit behind
// the shedder, which answers it at once. `shedLoad({ maxInFlight: 50, adaptive: true })`. As in fair-shares-http, the
// shedder, the dependency and the answers run on virtual time (shedLoad's `timers`), and the clock moves on only once
// every request sent has reached its place, so the latencies the ceiling learns are those of the scenario, not of
// a busy machine's event loop. Before the ceiling weighed its samples by slot time, the pulses set a near-zero
// baseline and every ordinary window after it cut the ceiling, down to 1 (simulation: 47% to 55% served).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { rateLimit, shedLoad } from '@sluice/express'
import express from 'express'
import { seededRandom, VirtualTime } from '../../examples/overload/virtual-time'
import { type Sent, tenantRequests } from './tenant-requests'

jest.setTimeout(180_000)

const SECONDS = 6
const FROM_MS = 2000

async function run(adaptive: boolean) {
  const time = new VirtualTime()
  const app = express()
  const shed = shedLoad({ maxInFlight: 50, tenant: (req) => req.get('x-tenant') ?? '', timers: time, adaptive })
  app.use(shed)
  // After the shedder: the scanner's key is over its limit from its 2nd request on, everyone else's never is.
  app.use(
    rateLimit({
      key: (req) => req.get('x-tenant') ?? '',
      limit: (req) => (req.get('x-tenant') === 'scanner' ? 1 : 1_000_000),
      window: '1h',
      headers: false,
    }),
  )
  // The dependency: 8 at a time, 10 ms each, the rest in line in front of it.
  let busy = 0
  let inHandler = 0
  const line: (() => void)[] = []
  const startWork = (done: () => void) => {
    busy++
    time.setTimeout(() => {
      busy--
      done()
      const next = line.shift()
      if (next !== undefined) startWork(next)
    }, 10)
  }
  app.get('/', (_req, res) => {
    inHandler++
    const done = () => {
      inHandler--
      res.json({ ok: true })
    }
    if (busy < 8) startWork(done)
    else line.push(done)
  })
  const server: Server = createServer(app)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const { send, sent, answered, close } = tenantRequests(port, time, 512)
  let lowestCeiling = Number.POSITIVE_INFINITY
  try {
    const random = seededRandom(11)
    for (let at = 0; at < SECONDS * 1000; at += (-Math.log(1 - random()) * 1000) / 400) time.at(at, () => send('app'))
    for (let pulse = 0; pulse < SECONDS * 1000; pulse += 1000) {
      for (let at = pulse; at < pulse + 150; at += (-Math.log(1 - random()) * 1000) / 3000) {
        time.at(at, () => send('scanner'))
      }
    }
    const settled = () => {
      if (time.now() >= FROM_MS) lowestCeiling = Math.min(lowestCeiling, shed.shedder.limit)
      return sent.length - answered() === inHandler + shed.shedder.waiting && shed.shedder.inFlight === inHandler
    }
    await time.runUntilSettled(SECONDS * 1000 + 2000, () => !settled())
  } finally {
    close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  const measured = sent.filter((r) => r.arrivedAt >= FROM_MS && r.arrivedAt < SECONDS * 1000)
  const legit = measured.filter((r) => r.tenant === 'app')
  const scanner = measured.filter((r) => r.tenant === 'scanner')
  const inTime = (r: Sent) => r.status === 200 && (r.answeredAt as number) - r.arrivedAt <= 1000
  return {
    served: legit.filter(inTime).length / legit.length,
    legit: legit.length,
    refused: scanner.filter((r) => r.status === 429).length / scanner.length,
    scanner: scanner.length,
    lowestCeiling,
  }
}

test('429s of a rateLimit behind shedLoad cannot poison the adaptive ceiling: legitimate traffic stays served', async () => {
  const fixed = await run(false)
  const adaptive = await run(true)
  console.log(
    `poisoned ceiling over HTTP: ${adaptive.legit} legitimate, ${adaptive.scanner} scanner requests measured; ` +
      `legitimate served ${(fixed.served * 100).toFixed(1)}% fixed, ${(adaptive.served * 100).toFixed(1)}% adaptive, ` +
      `scanner refused ${(adaptive.refused * 100).toFixed(1)}%, lowest ceiling ${adaptive.lowestCeiling}`,
  )
  expect(fixed.served).toBeGreaterThanOrEqual(0.999)
  expect(adaptive.served).toBeGreaterThanOrEqual(0.99)
  // 400/s at 10 ms keeps 4 in flight: the ceiling never came down to where it would queue them.
  expect(adaptive.lowestCeiling).toBeGreaterThanOrEqual(8)
  // The attack took place: every scanner request passed the shedder and was refused by the rateLimit behind it.
  expect(adaptive.scanner).toBeGreaterThan(1000)
  expect(adaptive.refused).toBe(1)
})
