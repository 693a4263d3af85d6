// The race: several Node processes, each with its own RedisStore, send 400 concurrent requests for one key with
// a limit of 50 per minute. One atomic script per request admits exactly 50; a read-then-write client does not.
import type { AlgorithmName } from '@sluice/core'
import Redis from 'ioredis'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { startWorker, type Worker } from './workers'

const ALGORITHMS: readonly AlgorithmName[] = [
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
]
const ROUNDS = 5
const REQUESTS = 400
const LIMIT = 50
const WINDOW_MS = 60_000

let server: RedisServer
let client: Redis
let workers: Worker[] = []
const figures: string[] = []

beforeAll(async () => {
  server = await startRedis()
  client = new Redis({ host: server.host, port: server.port })
  workers = await Promise.all([0, 1, 2, 3].map(() => startWorker(server.port)))
}, 60_000)

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()))
  client?.disconnect()
  await server?.stop()
  if (figures.length > 0) console.log(`race figures (admitted per round):\n${figures.join('\n')}`)
})

/**
 * Epoch-aligned windows admit a fresh limit when a window turns. A round lasts well under a second, so it must
 * not start in the last seconds of a window (by the Redis clock, which decides); if it would, it starts just after
 * the boundary instead. This avoids a boundary; it does not wait to observe one.
 */
async function clearOfWindowBoundary(marginMs: number): Promise<void> {
  const [seconds, micros] = await client.time()
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  const left = WINDOW_MS - (now % WINDOW_MS)
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 10))
}

describe.each([2, 4])('%i processes, 400 concurrent requests for one key, limit 50 per minute', (processes) => {
  test.each(ALGORITHMS)(
    `%s admits exactly ${LIMIT} in each of ${ROUNDS} rounds`,
    async (algorithm) => {
      const admitted: number[] = []
      const durations: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        if (algorithm === 'fixed-window' || algorithm === 'sliding-window') await clearOfWindowBoundary(3000)
        const key = `race:${processes}:${algorithm}:${round}`
        const started = performance.now()
        const replies = await Promise.all(
          workers
            .slice(0, processes)
            .map((worker) =>
              worker.run({ type: 'round', algorithm, key, limit: LIMIT, window: '1m', requests: REQUESTS / processes }),
            ),
        )
        durations.push(Math.round(performance.now() - started))
        admitted.push(replies.reduce((sum, reply) => sum + reply.admitted, 0))
      }
      figures.push(`  ${processes} processes, ${algorithm}: ${admitted.join(' ')} (round ms: ${durations.join(' ')})`)
      expect(admitted).toEqual(Array(ROUNDS).fill(LIMIT))
    },
    60_000,
  )

  test(`a naive GET/decide/INCR client admits more than ${LIMIT} in at least one round`, async () => {
    const admitted: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const key = `naive:${processes}:${round}`
      const replies = await Promise.all(
        workers
          .slice(0, processes)
          .map((worker) => worker.run({ type: 'naive-round', key, limit: LIMIT, requests: REQUESTS / processes })),
      )
      admitted.push(replies.reduce((sum, reply) => sum + reply.admitted, 0))
    }
    figures.push(`  ${processes} processes, naive GET/INCR: ${admitted.join(' ')}`)
    expect(Math.max(...admitted)).toBeGreaterThan(LIMIT)
  }, 60_000)
})
