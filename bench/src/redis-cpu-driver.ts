// A small driver for profiling: Node CPU µs per Redis decision (process.cpuUsage: user + system) and decisions per
// second, Sluice's RedisStore (fixed window) against express-rate-limit + rate-limit-redis, alternating rounds on one
// redis-server. `IN_FLIGHT=1,64,256 npx tsx src/redis-cpu-driver.ts`; ONLY=sluice or ONLY=peer for a profile of one.
import { createLimiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import Redis from 'ioredis'
import { rateLimitRedisStore, startRedis } from './redis-env'

const inFlights = (process.env['IN_FLIGHT'] ?? '64').split(',').map(Number)
const decisions = Number(process.env['DECISIONS'] ?? 40_000)
const rounds = Number(process.env['ROUNDS'] ?? 3)
const only = process.env['ONLY']

interface Round {
  /** Node CPU (user + system) per decision, µs. */
  readonly cpuMicros: number
  readonly perSecond: number
}

async function measure(inFlight: number, op: (i: number) => Promise<unknown>): Promise<Round> {
  let n = 0
  const start = process.cpuUsage()
  const startedAt = performance.now()
  const worker = async () => {
    while (n < decisions) await op(n++)
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  const cpu = process.cpuUsage(start)
  return { cpuMicros: (cpu.user + cpu.system) / n, perSecond: (n * 1000) / (performance.now() - startedAt) }
}

const NOTHING: Round = { cpuMicros: Number.NaN, perSecond: Number.NaN }
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

async function main() {
  const server = await startRedis()
  const a = new Redis({ host: server.host, port: server.port })
  const b = new Redis({ host: server.host, port: server.port })
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 100_000_000,
    window: 86_400_000,
    store: new RedisStore({ client: a, timeout: 1000, onError: 'closed', logger: { warn() {}, error() {} } }),
  })
  const peer = rateLimitRedisStore(b, 86_400_000)
  const key = (i: number) => `user:${String(i % 10_000).padStart(12, '0')}`
  const sluice = (i: number) => limiter.consume(key(i))
  const other = (i: number) => peer.increment(key(i))
  for (const inFlight of inFlights) {
    await measure(inFlight, sluice)
    await measure(inFlight, other)
    const cpu: number[] = []
    const rate: number[] = []
    for (let r = 0; r < rounds; r++) {
      const s = only === 'peer' ? NOTHING : await measure(inFlight, sluice)
      const p = only === 'sluice' ? NOTHING : await measure(inFlight, other)
      cpu.push(s.cpuMicros / p.cpuMicros)
      rate.push(s.perSecond / p.perSecond)
      console.log(
        `${inFlight} in flight, round ${r}: CPU µs/decision sluice ${s.cpuMicros.toFixed(2)} peer ${p.cpuMicros.toFixed(2)}` +
          ` (${(s.cpuMicros / p.cpuMicros).toFixed(2)}x); decisions/s sluice ${s.perSecond.toFixed(0)} peer ${p.perSecond.toFixed(0)}` +
          ` (${(s.perSecond / p.perSecond).toFixed(2)}x)`,
      )
    }
    console.log(
      `${inFlight} in flight, median of ${rounds}: CPU ${median(cpu).toFixed(2)}x the peer's, decisions/s ${median(rate).toFixed(2)}x`,
    )
  }
  a.disconnect()
  b.disconnect()
  await server.stop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
