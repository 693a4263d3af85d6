// MemoryStore and RedisStore replay the same random traces at the same instants and must agree on every outcome
// (allowed, remaining, resetMs, retryAfterMs, delayMs), for every algorithm (quotas' calendar windows included), alone
// and stacked, with and without blocks, on one redis-server.
import type Redis from 'ioredis'
import { recommendedClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { differential } from './differential'

let server: RedisServer
let client: Redis

beforeAll(async () => {
  server = await startRedis()
  client = await recommendedClient(server.port)
})

afterAll(async () => {
  client?.disconnect()
  await server?.stop()
})

const RUNS = 2000

describe.each([
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
  'leaky-queue',
  'calendar-window',
] as const)('%s: memory and Redis agree', (algorithm) => {
  test(`${RUNS} random traces (costs, gaps, exact boundaries, odd keys, blocks, refunds, resets)`, async () => {
    const ops = await differential(client, [algorithm], { numRuns: RUNS, maxRules: 1 })
    expect(ops).toBeGreaterThan(RUNS * 5)
  }, 120_000)
})

test(`stacked rules of mixed algorithms: ${RUNS} random traces`, async () => {
  const ops = await differential(
    client,
    ['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket', 'calendar-window'],
    { numRuns: RUNS, maxRules: 3 },
  )
  expect(ops).toBeGreaterThan(RUNS * 5)
}, 120_000)
