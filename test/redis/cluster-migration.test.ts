// Slots migrate from one master to another under load on stacked rules (two keys per request, in one slot). While a
// slot is split between its source and its target, Redis answers TRYAGAIN, and the target has never loaded the script
// (NOSCRIPT, possibly inside ioredis's "Too many Cluster redirections"). Neither says anything about a node: no outage
// is declared, keys on an uninvolved master are decided by Redis exactly, and the requests on a migrating slot that
// cannot be decided now fall back one by one.
import { createLimiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import Redis, { type Cluster } from 'ioredis'
import { scriptFor } from '../../packages/redis/src/script'
import { recommendedCluster } from '../../scripts/redis-clients'
import { type RedisCluster, startCluster } from '../../scripts/redis-server'
import { HOST, masterPortOf, sleep, slotOfUserKey, steadyLoad } from './cluster-load'

// Large enough that no key is full before the slots have moved: a full key is refused locally, without a call.
const LIMIT = 500
const MIGRATING = 4
const PER_MASTER = 12

let cluster: RedisCluster
let client: Cluster
const figures: string[] = []

beforeAll(async () => {
  cluster = await startCluster({ requireFullCoverage: false })
  client = await recommendedCluster(cluster.startupNodes)
}, 60_000)

afterAll(async () => {
  client?.disconnect()
  await cluster?.stop()
  if (figures.length > 0) console.log(`cluster migration figures:\n${figures.join('\n')}`)
})

/** Moves `slot` from the master on `from` to the one on `to`, one key a time, `pauseMs` between keys. */
async function migrate(slot: number, from: Redis, to: Redis, everyone: readonly Redis[], pauseMs: number) {
  const [fromId, toId] = [String(await from.call('CLUSTER', 'MYID')), String(await to.call('CLUSTER', 'MYID'))]
  await to.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId)
  await from.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId)
  for (;;) {
    const keys = (await from.call('CLUSTER', 'GETKEYSINSLOT', slot, 1)) as string[]
    if (keys.length === 0) break
    await from.call('MIGRATE', HOST, String(to.options.port), '', 0, 5000, 'KEYS', ...keys)
    await sleep(pauseMs)
  }
  for (const node of [to, from, ...everyone]) await node.call('CLUSTER', 'SETSLOT', slot, 'NODE', toId)
}

test('a slot migration under stacked load: no outage, uninvolved keys exact, TRYAGAIN and NOSCRIPT handled per request', async () => {
  // Masters by role: the source of the migration, its target, and one that has nothing to do with it.
  const masterPorts = [...new Set(client.slots.map((nodes) => Number(nodes?.[0]?.split(':')[1])))].sort()
  const [sourcePort, targetPort, otherPort] = masterPorts as [number, number, number]
  const onMaster = (port: number, count: number) => {
    const keys: string[] = []
    const slots = new Set<number>()
    for (let i = 0; keys.length < count; i++) {
      const key = `user:${i}`
      const slot = slotOfUserKey(key)
      if (masterPortOf(client, slot) === port && !slots.has(slot)) {
        keys.push(key)
        slots.add(slot)
      }
    }
    return keys
  }
  const sourceKeys = onMaster(sourcePort, MIGRATING + PER_MASTER)
  const migrating = sourceKeys.slice(0, MIGRATING)
  const uninvolved = onMaster(otherPort, PER_MASTER)
  const keys = [...sourceKeys, ...uninvolved]

  const logs: string[] = []
  const logger = {
    warn: (m: string) => logs.push(m),
    error: (m: string) => logs.push(m),
    info: (m: string) => logs.push(m),
  }
  const rules = [
    { name: 'user', limit: LIMIT, window: '1h' as const },
    { name: 'burst', limit: 1000, window: '1h' as const, algorithm: 'token-bucket' as const },
  ]
  const stacked = (onError: 'closed' | 'local') =>
    createLimiter({ prefix: `migration-${onError}`, rules, store: new RedisStore({ client, onError, logger }) })
  const [closed, local] = [stacked('closed'), stacked('local')]

  const admins = masterPorts.map((port) => new Redis({ host: HOST, port }))
  const [source, target, other] = admins as [Redis, Redis, Redis]
  try {
    // Every key has state on the source before the migration, so its slots hold keys to move one at a time.
    for (const key of keys) for (const limiter of [closed, local]) await limiter.consume([key, key])
    await target.script('FLUSH') // the target has never run the script
    const load = steadyLoad([closed, local], keys, 1000, (key) => [key, key])
    const started = performance.now()
    for (const key of migrating) await migrate(slotOfUserKey(key), source, target, [other], 250)
    const migratedMs = performance.now() - started
    await sleep(500)
    const [fromClosed = [], fromLocal = []] = await load.stop()

    const admitted = (outcomes: typeof fromClosed, key: string) =>
      outcomes.filter((o) => o.key === key && o.result === 'admitted').length + 1 // and the one before the load
    const fellBack = fromClosed.filter((o) => o.result === 'unavailable')
    // What Redis holds for a key is exactly what was admitted when every admission was Redis's; under 'local', an
    // admission decided from local memory is missing from Redis.
    const countedByRedis = async (limiter: typeof closed, key: string) =>
      LIMIT - ((await limiter.peek([key, key])).rules?.[0]?.remaining ?? 0)
    const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0)
    const uninvolvedAdmitted = sum(uninvolved.map((key) => admitted(fromClosed, key)))
    const uninvolvedCounted = sum(await Promise.all(uninvolved.map((key) => countedByRedis(closed, key))))
    const locallyAdmitted = sum(uninvolved.map((key) => admitted(fromLocal, key)))
    const locallyCounted = sum(await Promise.all(uninvolved.map((key) => countedByRedis(local, key))))
    figures.push(
      `  ${migrating.length} slots moved from ${sourcePort} to ${targetPort} (uninvolved: ${otherPort}) in ${migratedMs.toFixed(0)} ms under ${fromClosed.length} stacked decisions ` +
        `per store: outages logged ${logs.filter((l) => /unavailable/.test(l)).length}; requests that fell back ` +
        `${fellBack.length} (on migrating keys ${fellBack.filter((o) => migrating.includes(o.key)).length}); ` +
        `uninvolved keys: 'closed' admitted ${uninvolvedAdmitted}, counted by Redis ${uninvolvedCounted}; 'local' ` +
        `admitted ${locallyAdmitted}, counted by Redis ${locallyCounted}; 'local' store errors ` +
        `${fromLocal.filter((o) => !['admitted', 'rejected'].includes(o.result)).length}`,
    )

    expect(logs).toEqual([])
    expect(uninvolvedAdmitted).toBe(uninvolvedCounted)
    expect(locallyAdmitted).toBe(locallyCounted)
    // Only requests on the slots being moved could not be decided, and only while they moved.
    expect(fellBack.filter((o) => !migrating.includes(o.key))).toEqual([])
    // After the move, the target decides the migrated keys: the script was loaded there (NOSCRIPT, then EVAL).
    await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()))
    for (const key of migrating) expect(masterPortOf(client, slotOfUserKey(key))).toBe(targetPort)
    expect(await target.script('EXISTS', scriptFor(['sw', 'tb']).sha)).toEqual([1])
  } finally {
    for (const admin of admins) admin.disconnect()
  }
}, 60_000)
