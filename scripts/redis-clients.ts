// Test infrastructure: ioredis and node-redis clients as the README of @sluice/redis recommends them for a RedisStore:
// a call the store gave up on is never sent again later (no offline queue or resend on a single Redis, no delayed
// Cluster retries).
import type { RedisStoreClient } from '@sluice/redis'
import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis'
// Types only: the `redis` package (with its bundled modules) is loaded when a node-redis client is made, so that an
// ioredis-only worker process starts as fast as it did.
import type { RedisClientOptions, RedisClientType, RedisClusterType } from 'redis'

export const RECOMMENDED_REDIS_OPTIONS = {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
} as const satisfies RedisOptions

export const RECOMMENDED_CLUSTER_OPTIONS = {
  retryDelayOnFailover: 0,
  retryDelayOnClusterDown: 0,
  retryDelayOnTryAgain: 3,
  slotsRefreshTimeout: 200,
} as const satisfies ClusterOptions

/** A client of the redis-server on `port` with the recommended options, once it is ready for commands. */
export async function recommendedClient(port: number, options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis({ host: '127.0.0.1', port, ...RECOMMENDED_REDIS_OPTIONS, ...options })
  // Without an offline queue a command fails until the connection is ready.
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve)
    client.once('error', reject)
  })
  return client
}

/** A Cluster client with the recommended options, connected. */
export async function recommendedCluster(startupNodes: readonly { host: string; port: number }[]): Promise<Cluster> {
  const client = new Cluster([...startupNodes], { ...RECOMMENDED_CLUSTER_OPTIONS, lazyConnect: true })
  await client.connect()
  return client
}

// node-redis (the `redis` package) with the options the README recommends: no offline queue (a call made while the
// connection is down fails at once instead of being sent when it is back), and a short, steady reconnect delay.
export const RECOMMENDED_NODE_REDIS_OPTIONS = { disableOfflineQueue: true } as const satisfies RedisClientOptions

/** The library a suite's RedisStore clients come from: the suites run on both. */
export type ClientKind = 'ioredis' | 'node-redis'
export const CLIENT_KINDS: readonly ClientKind[] = ['ioredis', 'node-redis']

/** A connected client of either library, as a RedisStore takes it, and how to close it. */
export interface KindClient {
  readonly kind: ClientKind
  readonly client: RedisStoreClient
  /** Asks Redis for PONG on this client (the connection is up and answering). */
  ping(): Promise<unknown>
  /** Loads a script into the script cache of the server behind this client. */
  scriptLoad(source: string): Promise<unknown>
  close(): void
}

/**
 * A node-redis client of the redis-server on `port` with the recommended options, connected. Its 'error' events are
 * dropped: node-redis emits one per failed (re)connection, and an EventEmitter without a listener would throw them.
 */
export async function recommendedNodeRedis(port: number, reconnectMs?: number): Promise<RedisClientType> {
  const { createClient } = await import('redis')
  const client: RedisClientType = createClient({
    socket: { host: '127.0.0.1', port, reconnectStrategy: (retries) => reconnectMs ?? Math.min(retries * 50, 500) },
    ...RECOMMENDED_NODE_REDIS_OPTIONS,
  })
  client.on('error', () => {})
  await client.connect()
  return client
}

/** A node-redis cluster client with the recommended options, connected. */
export async function recommendedNodeRedisCluster(
  startupNodes: readonly { host: string; port: number }[],
): Promise<RedisClusterType> {
  const { createCluster } = await import('redis')
  const cluster: RedisClusterType = createCluster({
    rootNodes: startupNodes.map(({ host, port }) => ({ socket: { host, port } })),
    defaults: {
      ...RECOMMENDED_NODE_REDIS_OPTIONS,
      socket: { reconnectStrategy: (retries) => Math.min(retries * 50, 500) },
    },
  })
  cluster.on('error', () => {})
  await cluster.connect()
  return cluster
}

/**
 * A recommended client of `kind` for the redis-server on `port`. `reconnectMs`: a fixed reconnect delay (the
 * outage suite's), instead of the recommended growing one.
 */
export async function kindClient(kind: ClientKind, port: number, reconnectMs?: number): Promise<KindClient> {
  if (kind === 'ioredis') {
    const client = await recommendedClient(port, reconnectMs === undefined ? {} : { retryStrategy: () => reconnectMs })
    client.on('error', () => {})
    return {
      kind,
      client,
      ping: () => client.ping(),
      scriptLoad: (source) => client.script('LOAD', source),
      close: () => client.disconnect(),
    }
  }
  const client = await recommendedNodeRedis(port, reconnectMs)
  return {
    kind,
    client,
    ping: () => client.ping(),
    scriptLoad: (source) => client.scriptLoad(source),
    close: () => client.destroy(),
  }
}

/** A recommended Cluster client of `kind`, connected, as a RedisStore takes it, and how to close it. */
export async function kindCluster(
  kind: ClientKind,
  startupNodes: readonly { host: string; port: number }[],
): Promise<{ client: RedisStoreClient; close(): void }> {
  if (kind === 'ioredis') {
    const client = await recommendedCluster(startupNodes)
    return { client, close: () => client.disconnect() }
  }
  const client = await recommendedNodeRedisCluster(startupNodes)
  return { client, close: () => client.destroy() }
}
