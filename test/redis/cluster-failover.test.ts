// A Redis Cluster loses a master under load (SIGKILL, or SIGSTOP: a hang, not a refusal). Health belongs to the
// node: keys on the healthy masters keep being decided by Redis, the failed master's keys are decided locally (or
// refused, under 'closed') until Redis truly answers for them again (no flapping), no request the store gave up on is
// charged later, and the store is back on Redis within a second of the replica's promotion.
import { type CompiledRule, createLimiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import type { Cluster } from 'ioredis'
import { redisKeyOf } from '../../packages/redis/src/keys'
import { recommendedCluster } from '../../scripts/redis-clients'
import { type RedisCluster, startCluster } from '../../scripts/redis-server'
import {
  masterPortOf,
  type Outcome,
  replicaOf,
  sleep,
  slotOfUserKey,
  steadyLoad,
  whenClusterSettles,
  whenPromoted,
} from './cluster-load'

const LIMIT = 50
const KEYS = Array.from({ length: 200 }, (_, i) => `user:${i}`)
const DECISIONS_PER_SECOND = 2000
const COUNTER_LIMIT = 1_000_000

let cluster: RedisCluster
let client: Cluster
const figures: string[] = []

beforeAll(async () => {
  // Failover in about 2 s rather than 15; and slots whose master is up keep answering while another master is down.
  cluster = await startCluster({ nodeTimeoutMs: 1000, requireFullCoverage: false })
  client = await recommendedCluster(cluster.startupNodes)
}, 60_000)

afterAll(async () => {
  client?.disconnect()
  await cluster?.stop()
  if (figures.length > 0) console.log(`cluster failover figures:\n${figures.join('\n')}`)
})

/** The store's log with the time of each line. */
function timedLog() {
  const lines: { at: number; level: string; message: string }[] = []
  const push = (level: string) => (message: string) => lines.push({ at: performance.now(), level, message })
  return { lines, logger: { warn: push('warn'), error: push('error'), info: push('info') } }
}

/** The longest the whole process was frozen (a 5 ms ticker's worst lateness), as the outage suite measures it. */
function stallMonitor(): { stop: () => number } {
  let last = performance.now()
  let worst = 0
  const ticker = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last - 5)
    last = now
  }, 5)
  return {
    stop() {
      clearInterval(ticker)
      return Math.max(0, worst)
    },
  }
}

const count = (outcomes: readonly Outcome[], keep: (o: Outcome) => boolean) => outcomes.filter(keep).length

describe.each(['SIGKILL', 'SIGSTOP'] as const)('a master %s under 2,000 decisions/s over 200 keys', (signal) => {
  test('healthy slots stay on Redis; the failed ones fail over once, are never charged late, and come back', async () => {
    await new Promise<void>((resolve, reject) =>
      client.refreshSlotsCache((error) => (error ? reject(error) : resolve())),
    )
    const victimPort = masterPortOf(client, slotOfUserKey(KEYS[0] as string))
    const { replicaPort } = await replicaOf(victimPort)
    const failed = new Set(KEYS.filter((key) => masterPortOf(client, slotOfUserKey(key)) === victimPort))
    const prefix = `failover-${signal}`
    // 'closed' makes every decision Redis did not make visible; its counter (never full) counts Redis's charges.
    const closedLog = timedLog()
    const counter = createLimiter({
      prefix,
      name: 'count',
      algorithm: 'fixed-window',
      limit: COUNTER_LIMIT,
      window: '10d',
      store: new RedisStore({ client, onError: 'closed', logger: closedLog.logger }),
    })
    // The default policy, 'local', with the limit under test.
    const localLog = timedLog()
    const rate = createLimiter({
      prefix,
      name: 'rate',
      limit: LIMIT,
      window: '1h',
      store: new RedisStore({ client, logger: localLog.logger }),
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
      await sleep(2500)
    } finally {
      ;[counted = [], rated = []] = await load.stop()
      // Put the node back: it rejoins as a replica of the promoted one.
      if (signal === 'SIGKILL') await cluster.node(victimPort).restart()
      else cluster.node(victimPort).resume()
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
    for (const key of KEYS) {
      const used = await countedByRedis(key)
      const answered = count(counted, (o) => o.key === key && o.result === 'admitted')
      late += Math.max(0, used - answered)
      lost += Math.max(0, answered - used)
    }
    const slowest = Math.max(...counted.map((o) => o.ms), ...rated.map((o) => o.ms))
    const outages = (log: typeof localLog) => log.lines.filter((l) => l.level === 'warn').length
    const recoveries = (log: typeof localLog) => log.lines.filter((l) => l.level === 'info').length

    figures.push(
      `  ${signal}: ${counted.length} decisions per limiter; healthy slots refused ${healthyRefused}, over the limit ` +
        `${healthyOverLimit.length} keys; failed slots (${failed.size} keys) refused ${failedRefused}; most admitted per ` +
        `failed key during the failover ${mostDuringFailover}; outages/recoveries logged: local ${outages(localLog)}/` +
        `${recoveries(localLog)}, closed ${outages(closedLog)}/${recoveries(closedLog)}; charged beyond Redis's answers ${late} ` +
        `(calls whose reply the fault lost ${repliesLost}; answered but lost with the master ${lost}); promoted ${(promotedAt - faultAt).toFixed(0)} ms after the fault, back on ` +
        `Redis ${(backAt - promotedAt).toFixed(0)} ms after the promotion; slowest decision ${slowest.toFixed(0)} ms ` +
        `(process frozen at most ${frozenMs.toFixed(0)} ms)`,
    )

    expect(healthyRefused).toBe(0)
    expect(healthyOverLimit).toEqual([])
    expect(failedRefused).toBeGreaterThan(0)
    expect(backAt - promotedAt).toBeLessThanOrEqual(1000)
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
})
