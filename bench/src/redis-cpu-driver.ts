// A small driver for profiling: Node CPU µs per Redis decision, Sluice's RedisStore (fixed window) against
// express-rate-limit + rate-limit-redis, alternating rounds on one redis-server. `npx tsx src/redis-cpu-driver.ts`.
import { createLimiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import Redis from 'ioredis'
import { rateLimitRedisStore, startRedis } from './redis-env'

const inFlight = Number(process.env['IN_FLIGHT'] ?? 64)
const decisions = Number(process.env['DECISIONS'] ?? 40_000)
const rounds = Number(process.env['ROUNDS'] ?? 3)
const only = process.env['ONLY']

async function cpuPerDecision(op: (i: number) => Promise<unknown>): Promise<number> {
  let n = 0
  const start = process.cpuUsage()
  const worker = async () => {
    while (n < decisions) await op(n++)
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  const cpu = process.cpuUsage(start)
  return (cpu.user + cpu.system) / n
}

async function main() {
  const server = await startRedis()
  const a = new Redis({ host: server.host, port: server.port })
  const b = new Redis({ host: server.host, port: server.port })
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 100_000_000,
    window: 86_400_000,
    store: new RedisStore({ client: a, timeout: 1000, onError: 'closed' }),
  })
  const peer = rateLimitRedisStore(b, 86_400_000)
  const key = (i: number) => `user:${String(i % 10_000).padStart(12, '0')}`
  const sluice = (i: number) => limiter.consume(key(i))
  const other = (i: number) => peer.increment(key(i))
  await cpuPerDecision(sluice)
  await cpuPerDecision(other)
  for (let r = 0; r < rounds; r++) {
    const s = only === 'peer' ? Number.NaN : await cpuPerDecision(sluice)
    const p = only === 'sluice' ? Number.NaN : await cpuPerDecision(other)
    console.log(`round ${r}: sluice ${s.toFixed(2)} µs, peer ${p.toFixed(2)} µs, ratio ${(s / p).toFixed(2)}x`)
  }
  a.disconnect()
  b.disconnect()
  await server.stop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
