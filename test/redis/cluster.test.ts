// RedisStore on a real Redis Cluster (3 masters, 3 replicas): the same decisions as memory, one EVALSHA per slot,
// and refunds when a slot rejects what another slot admitted.
import { createLimiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import Redis, { type Cluster } from 'ioredis'
import { keySlot } from '../../packages/redis/src/slot'
import { recommendedCluster } from '../../scripts/redis-clients'
import { type RedisCluster, startCluster } from '../../scripts/redis-server'
import { differential, ODD_KEYS } from './differential'

let cluster: RedisCluster
let client: Cluster
let nodes: Redis[] = []

beforeAll(async () => {
  cluster = await startCluster()
  client = await recommendedCluster(cluster.startupNodes)
  nodes = cluster.nodes.map((n) => new Redis({ host: n.host, port: n.port }))
}, 120_000)

afterAll(async () => {
  client?.disconnect()
  for (const node of nodes) node.disconnect()
  await cluster?.stop()
})

/** EVALSHA calls summed over every node since the last reset. */
async function evalshaCalls(): Promise<number> {
  let calls = 0
  for (const node of nodes) {
    const match = /^cmdstat_evalsha:calls=(\d+)/m.exec(await node.info('commandstats'))
    calls += Number(match?.[1] ?? 0)
  }
  return calls
}

async function resetStats(): Promise<void> {
  await Promise.all(nodes.map((node) => node.config('RESETSTAT')))
}

test("the store's slot of a key is the cluster's", async () => {
  for (const key of [...ODD_KEYS, 'user:42', 'sluice:user:sw:{user%7B42%7D}']) {
    expect(keySlot(key)).toBe(await client.cluster('KEYSLOT', key))
  }
})

describe.each([
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
  'leaky-queue',
  'calendar-window',
] as const)('%s on the Cluster: memory and Redis agree', (algorithm) => {
  test('1000 random traces', async () => {
    await differential(client, [algorithm], { numRuns: 1000, maxRules: 1 })
  }, 120_000)
})

test('stacked rules whose keys live in different slots: 1500 random traces agree with memory', async () => {
  await differential(
    client,
    ['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket', 'calendar-window'],
    { numRuns: 1500, maxRules: 3 },
  )
}, 120_000)

test('stacked rules on one user key are one EVALSHA per request, on one node', async () => {
  const limiter = createLimiter({
    store: new RedisStore({ client }),
    rules: [
      { name: 'second', limit: 100, window: '1s' },
      { name: 'minute', limit: 50, window: '1m', algorithm: 'token-bucket' },
      { name: 'hour', limit: 500, window: '1h', algorithm: 'fixed-window' },
    ],
  })
  await limiter.consume('user:7') // loads the script on that node
  await resetStats()
  for (let i = 0; i < 20; i++) await limiter.consume('user:7')
  expect(await evalshaCalls()).toBe(20)
})

test('when one slot rejects, the slots that admitted are refunded', async () => {
  const limiter = createLimiter({
    store: new RedisStore({ client }),
    rules: [
      { name: 'user', limit: 10, window: '1m', algorithm: 'sliding-log' },
      { name: 'tenant', limit: 2, window: '1m', algorithm: 'fixed-window' },
    ],
  })
  const keys = ['user:1', 'tenant:acme']
  expect(keySlot(`x{${keys[0]}}`)).not.toBe(keySlot(`x{${keys[1]}}`))
  expect((await limiter.consume(keys, 2)).allowed).toBe(true)
  const rejected = await limiter.consume(keys, 1)
  expect(rejected.allowed).toBe(false)
  expect(rejected.rule).toBe('tenant')
  // The user rule admitted in its own slot, was charged there, and got the cost back.
  expect(rejected.rules?.[0]).toMatchObject({ allowed: true, remaining: 8 })
  expect((await limiter.peek('user:1', 1)).rules?.[0]?.remaining).toBe(8)
})

test('the decisions of one turn go as one EVALSHA per slot: a call never holds keys of two slots', async () => {
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 3,
    window: '1m',
    store: new RedisStore({ client }),
  })
  const users = Array.from({ length: 30 }, (_, i) => `batch:${i}`)
  await Promise.all(users.map((user) => limiter.consume(user))) // loads the script on every node
  await resetStats()
  // Four requests per user, all in one turn: each user's key is one slot.
  const decisions = await Promise.all(users.flatMap((user) => [1, 2, 3, 4].map(() => limiter.consume(user))))
  const slots = new Set(users.map((user) => keySlot(`{${user}}`)))
  expect(await evalshaCalls()).toBe(slots.size)
  for (let u = 0; u < users.length; u++) {
    expect(decisions.slice(4 * u, 4 * u + 4).map((d) => d.remaining)).toEqual([1, 0, 0, 0])
  }
})
