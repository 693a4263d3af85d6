// Faults of a Redis Cluster under load, one after the other on one cluster.
//
// A master is lost (SIGKILL, or SIGSTOP: a hang, not a refusal). Health belongs to the node: keys on the healthy
// masters keep being decided by Redis, the failed master's keys are decided locally (or refused, under 'closed') until
// Redis truly answers for them again (no flapping), no request the store gave up on is charged later, and the store is
// back on Redis within a second of the replica's promotion (or of the outage, when a starved instance declares it
// later). (A stopped master that resumes reads the calls that waited in its socket and answers them MOVED, and ioredis
// follows that to the promoted replica at once: those calls are older than their deadline, 30 × timeout, by then, and
// the script refuses them, 'SLUICELATE'.)
//
// Slots migrate from one master to another under load on stacked rules (two keys per request, in one slot). While a
// slot is split between its source and its target, Redis answers TRYAGAIN, and the target has never loaded the script
// (NOSCRIPT, possibly inside ioredis's "Too many Cluster redirections"). Neither says anything about a node: no outage
// is declared, keys on an uninvolved master are decided by Redis exactly, and the requests on a migrating slot that
// cannot be decided now fall back one by one.
//
// The migration is played with the stores on an ioredis Cluster, then on a node-redis cluster (the test reads the
// topology and Redis's counts through ioredis either way).
import { type CompiledRule, createLimiter } from '@sluice/core'
import { RedisStore, type RedisStoreClient } from '@sluice/redis'
import Redis, { type Cluster } from 'ioredis'
import { BACKSTOP_TIMEOUTS, DEFAULT_TIMEOUT_MS } from '../../packages/redis/src/deadlines'
import { redisKeyOf } from '../../packages/redis/src/keys'
import { scriptFor } from '../../packages/redis/src/script'
import { CLIENT_KINDS, type ClientKind, kindCluster, recommendedCluster } from '../../scripts/redis-clients'
import { type RedisCluster, startCluster } from '../../scripts/redis-server'
import {
  HOST,
  masterPortOf,
  migrate,
  type Outcome,
  replicaOf,
  sleep,
  slotOfUserKey,
  steadyLoad,
  whenClusterSettles,
  whenPromoted,
} from './cluster-load'
import { stallMonitor } from './stall-monitor'

const LIMIT = 50
const KEYS = Array.from({ length: 200 }, (_, i) => `user:${i}`)
const DECISIONS_PER_SECOND = 2000
const COUNTER_LIMIT = 1_000_000

// The migration: a limit large enough that no key is full before the slots have moved (a full key is refused
// locally, without a call), and how many slots move.
const MIGRATION_LIMIT = 500
const MIGRATING = 4
const PER_MASTER = 12

let cluster: RedisCluster
let client: Cluster
let nodeRedis: { client: RedisStoreClient; close(): void }
const figures: string[] = []

beforeAll(async () => {
  // Failover in about 2 s rather than 15; and slots whose master is up keep answering while another master is down.
  cluster = await startCluster({ nodeTimeoutMs: 1000, requireFullCoverage: false })
  client = await recommendedCluster(cluster.startupNodes)
  nodeRedis = await kindCluster('node-redis', cluster.startupNodes)
}, 60_000)

/** The client the stores under test use. */
const storeClient = (kind: ClientKind): RedisStoreClient => (kind === 'ioredis' ? client : nodeRedis.client)

afterAll(async () => {
  client?.disconnect()
  nodeRedis?.close()
  await cluster?.stop()
  if (figures.length > 0) console.log(`cluster fault figures:\n${figures.join('\n')}`)
})

/** The store's log with the time of each line. */
function timedLog() {
  const lines: { at: number; level: string; message: string }[] = []
  const push = (level: string) => (message: string) => lines.push({ at: performance.now(), level, message })
  return { lines, logger: { warn: push('warn'), error: push('error'), info: push('info') } }
}

const count = (outcomes: readonly Outcome[], keep: (o: Outcome) => boolean) => outcomes.filter(keep).length

/** Resolves once `done()` holds, looking every 10 ms; throws after `withinMs`. */
async function until(done: () => boolean, withinMs = 15_000): Promise<void> {
  const deadline = performance.now() + withinMs
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`not done within ${withinMs} ms`)
    await sleep(10)
  }
}

/** When a store first logged an outage after `since`, if it has. */
const firstWarning = (log: ReturnType<typeof timedLog>, since: number) =>
  log.lines.find((l) => l.level === 'warn' && l.at > since)?.at

// How long after its send Redis may still run a call: past it the script changes nothing ('SLUICELATE'). The store
// learns Redis's clock from its replies, a little late, so a deadline can fall a few ms after this; 500 ms covers it.
const LATE_MS = BACKSTOP_TIMEOUTS * DEFAULT_TIMEOUT_MS
const DEADLINE_SLACK_MS = 500

// The failovers run on ioredis only: a node-redis cluster asks a node for the slot map with no deadline, so after a
// master is stopped (SIGSTOP) its refresh can wait on that master until it resumes (see the README, "node-redis").
describe.each((['SIGKILL', 'SIGSTOP'] as const).map((signal) => [signal, 'ioredis' as ClientKind] as const))(
  'a master %s under 2,000 decisions/s over 200 keys, stores on %s',
  (signal, kind) => {
    test('healthy slots stay on Redis; the failed ones fail over once, are never charged late, and come back', async () => {
      await new Promise<void>((resolve, reject) =>
        client.refreshSlotsCache((error) => (error ? reject(error) : resolve())),
      )
      const victimPort = masterPortOf(client, slotOfUserKey(KEYS[0] as string))
      const { replicaPort } = await replicaOf(victimPort)
      const failed = new Set(KEYS.filter((key) => masterPortOf(client, slotOfUserKey(key)) === victimPort))
      const prefix = `failover-${signal}-${kind}`
      // 'closed' makes every decision Redis did not make visible; its counter (never full) counts Redis's charges.
      const closedLog = timedLog()
      const counter = createLimiter({
        prefix,
        name: 'count',
        algorithm: 'fixed-window',
        limit: COUNTER_LIMIT,
        window: '10d',
        store: new RedisStore({ client: storeClient(kind), onError: 'closed', logger: closedLog.logger }),
      })
      // The default policy, 'local', with the limit under test.
      const localLog = timedLog()
      const rate = createLimiter({
        prefix,
        name: 'rate',
        limit: LIMIT,
        window: '1h',
        store: new RedisStore({ client: storeClient(kind), logger: localLog.logger }),
      })

      const stall = stallMonitor()
      const load = steadyLoad([counter, rate], KEYS, DECISIONS_PER_SECOND)
      await sleep(1000)
      const faultAt = performance.now()
      let promotedAt: number
      let counted: Outcome[]
      let rated: Outcome[]
      try {
        if (signal === 'SIGKILL') await cluster.node(victimPort).kill()
        else cluster.node(victimPort).pause()
        promotedAt = await whenPromoted(replicaPort, 15_000)
        // A starved instance declares the outage later than the promotion, up to the backstop (3,946 ms after the fault,
        // 1,738 ms after the promotion, under two build loops): the requests go on until both stores have declared
        // it and for as long again as the stores are given to come back, since a store probes only while requests
        // arrive.
        await until(
          () => firstWarning(closedLog, faultAt) !== undefined && firstWarning(localLog, faultAt) !== undefined,
        )
        await sleep(2500)
      } finally {
        ;[counted = [], rated = []] = await load.stop()
        // Put the node back: it rejoins as a replica of the promoted one.
        if (signal === 'SIGKILL') await cluster.node(victimPort).restart()
        else {
          // A stopped master that resumes runs the calls that waited in its socket (through MOVED, on the promoted
          // replica), and the script refuses only those past their deadline (LATE_MS after the send). Calls reach it
          // until the store declares the outage: on an idle machine 100 ms after the fault, on a starved one up to the
          // 3 s backstop (declared 3,617 ms after the fault, promoted at 2,578 ms, 842 charged late, with two CPU
          // hogs). So it resumes once the last of them is past its deadline, as it is when it comes back late.
          const declaredAt = firstWarning(closedLog, faultAt) ?? performance.now()
          await sleep(declaredAt + LATE_MS + DEADLINE_SLACK_MS - performance.now())
          cluster.node(victimPort).resume()
        }
      }
      const frozenMs = stall.stop()
      await sleep(2000) // any retry the client still holds lands now, or never
      // Redis's count of a key: the fixed window's state is three doubles, the expiry, the window's start, the count.
      const countedByRedis = async (key: string) => {
        const value = await client.getBuffer(redisKeyOf(counter.rules[0] as CompiledRule, key))
        return value === null ? 0 : value.readDoubleLE(16)
      }

      // Healthy slots: every decision by Redis, and exactly the limit admitted per key.
      const healthyRefused = count(counted, (o) => !failed.has(o.key) && o.result !== 'admitted')
      const healthyOverLimit = KEYS.filter(
        (key) => !failed.has(key) && count(rated, (o) => o.key === key && o.result === 'admitted') > LIMIT,
      )
      // Failed slots: refused from the fault until Redis answers for them again, then Redis's again.
      const failedAfter = counted.filter((o) => failed.has(o.key) && o.at > faultAt).sort((a, b) => a.at - b.at)
      const lastRefused = failedAfter.filter((o) => o.result !== 'admitted').at(-1)
      const backAt = failedAfter.find((o) => lastRefused !== undefined && o.at > lastRefused.at)?.at ?? Number.NaN
      const failedRefused = count(failedAfter, (o) => o.result !== 'admitted')
      // The store can come back only from an outage it has declared. A call on the stopped master is given up on after
      // 100 ms of this instance's free time (up to the 3 s backstop), so on a starved machine the outage can be declared
      // after the promotion; the second is counted from the later of the two.
      const declaredAt = firstWarning(closedLog, faultAt) ?? faultAt
      const backFrom = Math.max(promotedAt, declaredAt)
      // During the failover (fault to recovery, by the 'local' store's log) at most the limit per key, locally.
      const recovered = localLog.lines.find((l) => l.level === 'info' && l.at > faultAt)?.at ?? Number.POSITIVE_INFINITY
      const duringFailover = (key: string) =>
        count(rated, (o) => o.key === key && o.result === 'admitted' && o.at >= faultAt && o.at < recovered)
      const mostDuringFailover = Math.max(...[...failed].map(duringFailover))
      // Late charges: Redis's count per key beyond the decisions Redis answered. A call the failed master ran (and passed
      // to its replica) just before it died or stopped, whose reply never came, is counted and was refused: that was no
      // late charge, so those calls bound what may be over.
      const repliesLost = count(counted, (o) => failed.has(o.key) && o.at < faultAt && o.result !== 'admitted')
      let late = 0
      let lost = 0
      const lateKeys: string[] = []
      for (const key of KEYS) {
        const used = await countedByRedis(key)
        const answered = count(counted, (o) => o.key === key && o.result === 'admitted')
        late += Math.max(0, used - answered)
        if (used > answered) {
          const refusals = counted.filter((o) => o.key === key && o.result !== 'admitted')
          lateKeys.push(
            `    ${key}: counted ${used}, admitted ${answered}; refused at (ms from the fault + ms waited): ` +
              refusals.map((o) => `${(o.at - faultAt).toFixed(0)}+${o.ms.toFixed(0)}`).join(', '),
          )
        }
        lost += Math.max(0, answered - used)
      }
      const slowest = Math.max(...counted.map((o) => o.ms), ...rated.map((o) => o.ms))
      const outages = (log: typeof localLog) => log.lines.filter((l) => l.level === 'warn').length
      const recoveries = (log: typeof localLog) => log.lines.filter((l) => l.level === 'info').length

      figures.push(
        `  ${kind}, ${signal}: ${counted.length} decisions per limiter; healthy slots refused ${healthyRefused}, over the limit ` +
          `${healthyOverLimit.length} keys; failed slots (${failed.size} keys) refused ${failedRefused}; most admitted per ` +
          `failed key during the failover ${mostDuringFailover}; outages/recoveries logged: local ${outages(localLog)}/` +
          `${recoveries(localLog)}, closed ${outages(closedLog)}/${recoveries(closedLog)}; charged beyond Redis's answers ${late} ` +
          `(calls whose reply the fault lost ${repliesLost}; answered but lost with the master ${lost}); outage declared ` +
          `${(declaredAt - faultAt).toFixed(0)} ms and promoted ${(promotedAt - faultAt).toFixed(0)} ms after the fault, back on ` +
          `Redis ${(backAt - backFrom).toFixed(0)} ms after both; slowest decision ${slowest.toFixed(0)} ms ` +
          `(process frozen at most ${frozenMs.toFixed(0)} ms)`,
      )

      // For whoever reads a failure: the keys charged beyond Redis's answers, and any outage beyond the one.
      if (late > repliesLost) figures.push(...lateKeys)
      for (const [name, log] of [
        ['local', localLog],
        ['closed', closedLog],
      ] as const) {
        if (outages(log) === 1) continue
        for (const line of log.lines) figures.push(`    ${name} +${(line.at - faultAt).toFixed(0)} ms: ${line.message}`)
      }

      expect(healthyRefused).toBe(0)
      expect(healthyOverLimit).toEqual([])
      expect(failedRefused).toBeGreaterThan(0)
      expect(backAt - backFrom).toBeLessThanOrEqual(1000)
      expect(mostDuringFailover).toBeLessThanOrEqual(LIMIT)
      // One outage and one recovery each: no flapping.
      expect([outages(localLog), recoveries(localLog), outages(closedLog), recoveries(closedLog)]).toEqual([1, 1, 1, 1])
      expect(late).toBeLessThanOrEqual(repliesLost)
    }, 60_000)

    afterEach(
      () =>
        whenClusterSettles(
          cluster.nodes.map((n) => n.port),
          30_000,
        ),
      40_000,
    )
  },
)

test.each(CLIENT_KINDS)(
  'a slot migration under stacked load, stores on %s: no outage, uninvolved keys exact, TRYAGAIN and NOSCRIPT handled per request',
  async (kind) => {
    await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()))
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
      { name: 'user', limit: MIGRATION_LIMIT, window: '1h' as const },
      { name: 'burst', limit: 1000, window: '1h' as const, algorithm: 'token-bucket' as const },
    ]
    const stacked = (onError: 'closed' | 'local') =>
      createLimiter({
        prefix: `migration-${kind}-${onError}`,
        rules,
        store: new RedisStore({ client: storeClient(kind), onError, logger }),
      })
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
        MIGRATION_LIMIT - ((await limiter.peek([key, key])).rules?.[0]?.remaining ?? 0)
      const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0)
      const uninvolvedAdmitted = sum(uninvolved.map((key) => admitted(fromClosed, key)))
      const uninvolvedCounted = sum(await Promise.all(uninvolved.map((key) => countedByRedis(closed, key))))
      const locallyAdmitted = sum(uninvolved.map((key) => admitted(fromLocal, key)))
      const locallyCounted = sum(await Promise.all(uninvolved.map((key) => countedByRedis(local, key))))
      figures.push(
        `  ${kind}: ${migrating.length} slots moved from ${sourcePort} to ${targetPort} (uninvolved: ${otherPort}) in ${migratedMs.toFixed(0)} ms under ${fromClosed.length} stacked decisions ` +
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
  },
  60_000,
)
