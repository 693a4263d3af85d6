// Test infrastructure: ioredis clients as the README of @sluice/redis recommends them for a RedisStore: a call the
// store gave up on is never sent again later (no offline queue or resend on a single Redis, no delayed Cluster retries).
import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis'

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
