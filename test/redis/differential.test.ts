// MemoryStore and RedisStore replay the same random traces at the same instants and must agree on every outcome
// (allowed, remaining, resetMs, retryAfterMs, delayMs), for every algorithm (quotas' calendar windows included), alone
// and stacked, with and without blocks, on one redis-server, through an ioredis client and a node-redis client. The
// RedisStore has default options (but a timeout no starved redis-server misses), so its local short-circuit answers
// every rejection it may: the flood traces keep a few keys rejected and blocked for many ops in a row, where a local
// answer and Redis's could part. The Lua is the same for both clients; what node-redis adds is its calling convention
// and reply parsing, so it replays a tenth of the traces.
import { CLIENT_KINDS, type ClientKind, type KindClient, kindClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { differential } from './differential'

let server: RedisServer
const clients = new Map<ClientKind, KindClient>()

beforeAll(async () => {
  server = await startRedis()
  for (const kind of CLIENT_KINDS) clients.set(kind, await kindClient(kind, server.port))
})

afterAll(async () => {
  for (const client of clients.values()) client.close()
  await server?.stop()
})

const RUNS: { readonly [kind in ClientKind]: number } = { ioredis: 2000, 'node-redis': 200 }

describe.each(CLIENT_KINDS)('%s', (kind) => {
  const runs = RUNS[kind]
  const client = () => (clients.get(kind) as KindClient).client

  describe.each([
    'fixed-window',
    'sliding-log',
    'sliding-window',
    'token-bucket',
    'leaky-bucket',
    'leaky-queue',
    'calendar-window',
  ] as const)('%s: memory and Redis agree', (algorithm) => {
    test(`${runs} random traces (costs, gaps, exact boundaries, odd keys, blocks, refunds, resets)`, async () => {
      const ops = await differential(client(), [algorithm], { numRuns: runs, maxRules: 1 })
      expect(ops).toBeGreaterThan(runs * 5)
    }, 120_000)

    test(`${runs / 10} floods of one or two keys (blocks, short gaps, retry times)`, async () => {
      const ops = await differential(client(), [algorithm], { numRuns: runs / 10, maxRules: 1, shape: 'flood' })
      // At least ten ops each.
      expect(ops).toBeGreaterThanOrEqual(runs)
    }, 120_000)
  })

  test(`stacked rules of mixed algorithms: ${runs} random traces`, async () => {
    const ops = await differential(
      client(),
      ['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket', 'calendar-window'],
      { numRuns: runs, maxRules: 3 },
    )
    expect(ops).toBeGreaterThan(runs * 5)
  }, 120_000)

  test(`floods on stacked quotas, windows and buckets with blocks: ${runs / 5} random traces`, async () => {
    const ops = await differential(
      client(),
      ['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket', 'calendar-window'],
      { numRuns: runs / 5, maxRules: 3, shape: 'flood' },
    )
    expect(ops).toBeGreaterThanOrEqual(runs * 2)
  }, 120_000)
})
