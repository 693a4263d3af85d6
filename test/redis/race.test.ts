// The race: four Express instances in separate processes, each with its own RedisStore (default options, but for a
// timeout no starved redis-server misses; see the worker), get 400 concurrent HTTP requests for one key with a limit
// of 50 per hour. One atomic script per request admits exactly 50 in every round, also when every instance's event loop is held up while the burst arrives; a read-then-write client
// does not. (Per hour rather than per minute: on a busy machine a round can take seconds, and a bucket of 50 a minute
// refills one request every 1.2 s, which would be a correct 51st admission, not a race.) The instances' stores run on
// ioredis clients, then on node-redis clients; the node-redis instances play two rounds per case instead of five (the
// script that decides is the same; what is new is the client's pipelining of a burst).
import type { AlgorithmName } from '@sluice/core'
import Redis from 'ioredis'
import { CLIENT_KINDS, type ClientKind } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { startWorker, type Worker } from './workers'
import { HTTP_ALGORITHMS, HTTP_LIMIT } from './workers/http-routes'

const PROCESSES = 4
const ROUNDS: { readonly [kind in ClientKind]: number } = { ioredis: 5, 'node-redis': 2 }
const REQUESTS = 400
const WINDOW_MS = 3_600_000
const BLOCK_MS = 250

let server: RedisServer
let client: Redis
const figures: string[] = []

beforeAll(async () => {
  server = await startRedis()
  client = new Redis({ host: server.host, port: server.port })
}, 60_000)

afterAll(async () => {
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

/** What the instances have logged about Redis being unavailable (one warning per outage), so far. */
async function outages(workers: readonly Worker[]): Promise<string[]> {
  const warnings = await Promise.all(workers.map((worker) => worker.warnings()))
  return warnings.flat().filter((warning) => warning.includes(' is unavailable ('))
}

/** One round: every worker gets its share of the requests at once, over HTTP. Answers the count of each status. */
async function round(
  workers: readonly Worker[],
  algorithm: AlgorithmName,
  key: string,
  blockMs: number,
): Promise<Record<number, number>> {
  const perWorker = REQUESTS / PROCESSES
  const requests = workers.flatMap((worker) =>
    Array.from({ length: perWorker }, (_, i) => {
      // One request early in each instance's share holds its event loop while the others wait for Redis.
      const block = blockMs > 0 && i === 10 ? `&block=${blockMs}` : ''
      const url = `http://127.0.0.1:${worker.httpPort}/${algorithm}?key=${encodeURIComponent(key)}${block}`
      return fetch(url).then(async (response) => {
        await response.arrayBuffer()
        return response.status
      })
    }),
  )
  const statuses: Record<number, number> = {}
  for (const status of await Promise.all(requests)) statuses[status] = (statuses[status] ?? 0) + 1
  return statuses
}

describe.each(CLIENT_KINDS)('instances on %s clients', (kind) => {
  let workers: Worker[] = []

  beforeAll(async () => {
    workers = await Promise.all(Array.from({ length: PROCESSES }, () => startWorker(server.port, 0, kind)))
  }, 120_000) // four TypeScript processes starting at once, on a machine that may be loaded

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()))
  })

  describe.each([
    ['', 0],
    [`, each instance's event loop held ${BLOCK_MS} ms as the burst arrives`, BLOCK_MS],
  ])(
    `${PROCESSES} Express instances, ${REQUESTS} concurrent requests for one key, limit 50 per hour%s`,
    (_, blockMs) => {
      test.each(HTTP_ALGORITHMS)(
        `%s admits exactly ${HTTP_LIMIT} in each of ${ROUNDS[kind]} rounds, and answers every other request 429`,
        async (algorithm) => {
          const rounds = ROUNDS[kind]
          const admitted: number[] = []
          const others: Record<number, number>[] = []
          const durations: number[] = []
          const outagesBefore = (await outages(workers)).length
          for (let r = 0; r < rounds; r++) {
            if (algorithm === 'fixed-window' || algorithm === 'sliding-window') await clearOfWindowBoundary(3000)
            const started = performance.now()
            const {
              200: ok = 0,
              429: limited = 0,
              ...rest
            } = await round(workers, algorithm, `race:${kind}:${blockMs}:${algorithm}:${r}`, blockMs)
            durations.push(Math.round(performance.now() - started))
            admitted.push(ok)
            others.push(rest)
            expect(ok + limited + Object.values(rest).reduce((a, b) => a + b, 0)).toBe(REQUESTS)
          }
          const strays = others.filter((rest) => Object.keys(rest).length > 0)
          figures.push(
            `  ${kind}, ${blockMs > 0 ? `held ${blockMs} ms, ` : ''}${algorithm}: ${admitted.join(' ')} (round ms: ${durations.join(' ')})` +
              (strays.length > 0 ? ` other statuses: ${JSON.stringify(strays)}` : ''),
          )
          // Redis decided every request: no instance declared it down and fell back to local memory (which admits
          // per instance, by design). Checked first, so an outage is not mistaken for a race.
          expect((await outages(workers)).slice(outagesBefore)).toEqual([])
          expect(admitted).toEqual(Array(rounds).fill(HTTP_LIMIT))
          expect(strays).toEqual([])
        },
        60_000,
      )
    },
  )

  // Four instances on the same limits are the normal deployment: their stores, each registering its rules in Redis
  // when it bound them (and again every 30 s), find only their own limits there.
  test('the instances, all on the same limits, warn about no key space shared with other limits', async () => {
    const warnings = await Promise.all(workers.map((worker) => worker.warnings()))
    expect(warnings.flat().filter((warning) => warning.includes('counts under'))).toEqual([])
    // They did register, one entry for all four.
    expect(await client.hkeys('sluice:default:fw:~rules')).toEqual([`limit=${HTTP_LIMIT};windowMs=${WINDOW_MS}`])
    expect(await client.hkeys('sluice:default:tb:~rules')).toEqual([
      `limit=${HTTP_LIMIT};rate=${HTTP_LIMIT}/${WINDOW_MS}ms`,
    ])
  })

  // The naive client is no store: once, on the first kind's instances.
  if (kind === 'ioredis') {
    test(`a naive GET/decide/INCR client admits more than ${HTTP_LIMIT} in at least one round`, async () => {
      const admitted: number[] = []
      for (let r = 0; r < ROUNDS.ioredis; r++) {
        const key = `naive:${r}`
        const replies = await Promise.all(
          workers.map((worker) =>
            worker.run({ type: 'naive-round', key, limit: HTTP_LIMIT, requests: REQUESTS / PROCESSES }),
          ),
        )
        admitted.push(replies.reduce((sum, reply) => sum + reply.admitted, 0))
      }
      figures.push(`  naive GET/INCR: ${admitted.join(' ')}`)
      expect(Math.max(...admitted)).toBeGreaterThan(HTTP_LIMIT)
    }, 60_000)
  }
})
