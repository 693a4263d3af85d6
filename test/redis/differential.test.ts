// MemoryStore and RedisStore replay the same random traces at the same instants and must agree on every outcome
// (allowed, remaining, resetMs, retryAfterMs, delayMs), for every algorithm (quotas' calendar windows included), alone
// and stacked, with and without blocks, on one redis-server, through an ioredis client and a node-redis client. The
// RedisStore has default options (but a timeout no starved redis-server misses), so its local short-circuit answers
// every rejection it may: the flood traces keep a few keys rejected and blocked for many ops in a row, where a local
// answer and Redis's could part. The Lua is the same for both clients; what node-redis adds is its calling convention
// and reply parsing, so it replays a tenth of the traces.
import { CLIENT_KINDS, type ClientKind, type KindClient, kindClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { differential, type Trace } from './differential'

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

// Found by the flood differential (seed -1131364595): a leaky bucket of 1 a second with a 1 s block, admitted at t,
// refused at t + 1 ms (the block starts), refused again at t + 1000 ms by the short-circuit alone; then the clock
// stepped back 1 ms and a cost of 2 came. The memory store had seen the state expire at t + 1000 and dropped it, so it
// answered from a new key (retry-after 1000 ms, the block's 2 ms or the drain's 1000, whichever is longer); Redis had
// not seen that instant, kept the state and answered 1001. A block now holds a refusal for the short-circuit no longer
// than the rule's state lives, so the call at t + 1000 reaches Redis, which drops the state too.
const BLOCK_OUTLIVES_STATE: Trace = {
  rules: [
    {
      algorithm: 'leaky-bucket',
      limit: 1,
      window: 1000,
      rate: undefined,
      period: { period: 'day', timeZone: 'UTC' },
      block: 1000,
    },
  ],
  start: 1_700_000_000_000,
  ops: [
    { kind: 'apply', gap: { to: 'plain', ms: 0 }, keys: [1], cost: 1, charge: true },
    { kind: 'apply', gap: { to: 'plain', ms: 1 }, keys: [1], cost: 1, charge: true },
    { kind: 'apply', gap: { to: 'retry-after', offset: -1 }, keys: [1], cost: 1, charge: true },
    { kind: 'refund', gap: { to: 'back', ms: 1 }, keys: [0], cost: 1 },
    { kind: 'apply', gap: { to: 'plain', ms: 0 }, keys: [1], cost: 2, charge: true },
  ],
}

test('a block that outlives the state it refused with: the state is gone in both stores after a step back', async () => {
  const client = (clients.get('ioredis') as KindClient).client
  const { ops } = await differential(client, ['leaky-bucket'], { numRuns: 1, maxRules: 1, trace: BLOCK_OUTLIVES_STATE })
  expect(ops).toBe(5)
})

describe.each(CLIENT_KINDS)('%s', (kind) => {
  const runs = RUNS[kind]
  const client = () => (clients.get(kind) as KindClient).client
  // The flood traces' decisions, and how many of them the short-circuit answered (checked after the last flood).
  const floods = { ops: 0, shortCircuited: 0 }

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
      const { ops } = await differential(client(), [algorithm], { numRuns: runs, maxRules: 1, largeSteps: true })
      expect(ops).toBeGreaterThan(runs * 5)
    }, 120_000)

    test(`${runs / 10} floods of one or two keys (blocks, short gaps, retry times)`, async () => {
      const { ops, shortCircuited } = await differential(client(), [algorithm], {
        numRuns: runs / 10,
        maxRules: 1,
        shape: 'flood',
        largeSteps: true,
      })
      // At least ten ops each.
      expect(ops).toBeGreaterThanOrEqual(runs)
      floods.ops += ops
      floods.shortCircuited += shortCircuited
    }, 120_000)
  })

  test(`stacked rules of mixed algorithms: ${runs} random traces`, async () => {
    const { ops } = await differential(
      client(),
      ['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket', 'calendar-window'],
      { numRuns: runs, maxRules: 3, largeSteps: true },
    )
    expect(ops).toBeGreaterThan(runs * 5)
  }, 120_000)

  test(`floods on stacked quotas, windows and buckets with blocks: ${runs / 5} random traces`, async () => {
    const { ops, shortCircuited } = await differential(
      client(),
      ['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket', 'calendar-window'],
      { numRuns: runs / 5, maxRules: 3, shape: 'flood', largeSteps: true },
    )
    expect(ops).toBeGreaterThanOrEqual(runs * 2)
    floods.ops += ops
    floods.shortCircuited += shortCircuited
  }, 120_000)

  // The store under test runs with its short-circuit on: the floods' rejections must reach it, so that what it answers
  // is compared with memory too, not only what Redis answers (seen: 4 to 35 decisions per algorithm on 20 node-redis
  // floods, 155 to 409 on 200 ioredis ones).
  test('the short-circuit answered part of the floods, and agreed with memory each time', () => {
    expect(floods.ops).toBeGreaterThan(0)
    expect(floods.shortCircuited).toBeGreaterThan(0)
  })
})
