// Helpers of the Cluster fault suites: who serves which slot, who replicates whom, and a steady load of decisions
// whose every outcome is recorded with its time, so a suite can say what happened to which keys and when.
import { type Limiter, StoreUnavailableError } from '@sluice/core'
import Redis, { type Cluster } from 'ioredis'
import { keySlot } from '../../packages/redis/src/slot'

export const HOST = '127.0.0.1'

/** The port of the master that serves `slot`, by the client's slot map. */
export function masterPortOf(client: Cluster, slot: number): number {
  const nodeKey = client.slots[slot]?.[0]
  if (nodeKey === undefined) throw new Error(`no master for slot ${slot}`)
  return Number(nodeKey.slice(nodeKey.lastIndexOf(':') + 1))
}

/** The slot of a user key under any rule (its hash tag is the user key). */
export function slotOfUserKey(key: string): number {
  return keySlot(`x{${key}}`)
}

/** A node's cluster id and the port of its first replica. */
export async function replicaOf(masterPort: number): Promise<{ id: string; replicaPort: number }> {
  const master = new Redis({ host: HOST, port: masterPort })
  try {
    const id = String(await master.call('CLUSTER', 'MYID'))
    const lines = (await master.call('CLUSTER', 'REPLICAS', id)) as string[]
    const address = lines[0]?.split(' ')[1] // "host:port@bus"
    if (address === undefined) throw new Error(`master ${masterPort} has no replica`)
    return { id, replicaPort: Number(address.slice(address.indexOf(':') + 1, address.indexOf('@'))) }
  } finally {
    master.disconnect()
  }
}

/** Polls `port` every 20 ms until ROLE says master; resolves with performance.now() then. */
export async function whenPromoted(port: number, withinMs: number): Promise<number> {
  const node = new Redis({ host: HOST, port })
  try {
    const deadline = performance.now() + withinMs
    while (performance.now() < deadline) {
      const role = (await node.call('ROLE')) as unknown[]
      if (role[0] === 'master') return performance.now()
      await sleep(20)
    }
    throw new Error(`port ${port} was not promoted within ${withinMs} ms`)
  } finally {
    node.disconnect()
  }
}

/** Until every node says cluster_state:ok, sees no node failing, and (a replica) is in sync with its master. */
export async function whenClusterSettles(ports: readonly number[], withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs
  for (const port of ports) {
    const node = new Redis({ host: HOST, port, retryStrategy: () => 50 })
    node.on('error', () => {})
    try {
      for (;;) {
        const info = await node.cluster('INFO').catch(() => '')
        const nodes = String(await node.cluster('NODES').catch(() => ''))
        const replication = await node.info('replication').catch(() => '')
        const healthy = !/fail|handshake|noaddr|disconnected/.test(nodes)
        // A replica that has not finished its sync could not take over from its master.
        const synced = replication.includes('role:master') || replication.includes('master_link_status:up')
        if (info.includes('cluster_state:ok') && healthy && synced) break
        if (performance.now() > deadline) throw new Error(`cluster did not settle on port ${port}`)
        await sleep(50)
      }
    } finally {
      node.disconnect()
    }
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One decision as the load saw it. */
export interface Outcome {
  readonly key: string
  /** performance.now() when the call started. */
  readonly at: number
  readonly ms: number
  /** 'admitted' | 'rejected' | 'unavailable' (StoreUnavailableError) | another error's name. */
  readonly result: string
}

/**
 * `perSecond` decisions a second, spread over `keys` round robin, on each of the limiters, until stopped. Every
 * outcome is recorded per limiter. `keysOf` gives a request's keys, one per rule (default: the key alone).
 */
export function steadyLoad(
  limiters: readonly Limiter[],
  keys: readonly string[],
  perSecond: number,
  keysOf: (key: string) => string | string[] = (key) => key,
): { stop: () => Promise<Outcome[][]> } {
  const outcomes: Outcome[][] = limiters.map(() => [])
  const inFlight = new Set<Promise<void>>()
  const perTick = Math.max(1, Math.round(perSecond / 100))
  let n = 0
  let running = true
  const one = (limiter: Limiter, into: Outcome[], key: string) => {
    const at = performance.now()
    const call: Promise<void> = limiter.consume(keysOf(key)).then(
      (decision) => {
        into.push({ key, at, ms: performance.now() - at, result: decision.allowed ? 'admitted' : 'rejected' })
      },
      (error: unknown) => {
        const result = error instanceof StoreUnavailableError ? 'unavailable' : (error as Error).name
        into.push({ key, at, ms: performance.now() - at, result })
      },
    )
    inFlight.add(call)
    void call.finally(() => inFlight.delete(call))
  }
  const ticking = (async () => {
    let next = performance.now()
    while (running) {
      for (let i = 0; i < perTick; i++) {
        const key = keys[n++ % keys.length] as string
        limiters.forEach((limiter, l) => {
          one(limiter, outcomes[l] as Outcome[], key)
        })
      }
      next += 10
      await sleep(Math.max(0, next - performance.now()))
    }
  })()
  return {
    async stop() {
      running = false
      await ticking
      await Promise.all(inFlight)
      return outcomes
    },
  }
}

/** Moves `slot` from the master on `from` to the one on `to`, one key a time, `pauseMs` between keys. */
export async function migrate(slot: number, from: Redis, to: Redis, everyone: readonly Redis[], pauseMs: number) {
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
