// Clock skew: two processes whose own clocks differ by 20 s share one limit through Redis, whose clock alone
// decides. With instance clocks, the process 20 s ahead would see 20 s more refill (and, near a window's end,
// another window), and admit more than the limit.
import type { AlgorithmName } from '@sluice/core'
import Redis from 'ioredis'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { startWorker, type Worker } from './workers'

const SKEW_MS = 20_000
const LIMIT = 50

let server: RedisServer
let client: Redis
let behind: Worker
let ahead: Worker

beforeAll(async () => {
  server = await startRedis()
  client = new Redis({ host: server.host, port: server.port })
  ;[behind, ahead] = await Promise.all([startWorker(server.port), startWorker(server.port, SKEW_MS)])
}, 60_000)

afterAll(async () => {
  await Promise.all([behind?.stop(), ahead?.stop()])
  client?.disconnect()
  await server?.stop()
})

/** As in the race suite: start clear of an epoch-aligned window's last seconds (by the Redis clock). */
async function clearOfWindowBoundary(windowMs: number, marginMs: number): Promise<void> {
  const [seconds, micros] = await client.time()
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  const left = windowMs - (now % windowMs)
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 10))
}

test.each<AlgorithmName>(['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket'])(
  '%s: processes 20 s apart admit exactly the limit between them',
  async (algorithm) => {
    await clearOfWindowBoundary(60_000, 3000)
    const key = `skew:${algorithm}`
    const round = { type: 'round', algorithm, key, limit: LIMIT, window: '1m' } as const
    const first = await behind.run({ ...round, requests: 30 })
    const second = await ahead.run({ ...round, requests: 40 })
    const third = await behind.run({ ...round, requests: 20 })
    // The skew is real: the two processes' clocks read 20 s apart.
    expect(second.clock - first.clock).toBeGreaterThanOrEqual(SKEW_MS - 1000)
    expect(third.clock - second.clock).toBeLessThanOrEqual(-SKEW_MS + 1000)
    expect([first.admitted, second.admitted, third.admitted]).toEqual([30, 20, 0])
  },
  30_000,
)
