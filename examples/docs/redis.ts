// The code of docs/redis.md: each region is a block of the doc, word for word (test/docs/code-blocks.test.ts), and
// `npm run typecheck` compiles this file, so the doc's code always builds.
import { createLimiter, type Limiter, StoreKeyError } from '@sluice/core'
import { concurrencyLimit, rateLimit } from '@sluice/express'
import { RedisLeaseStore, RedisStore } from '@sluice/redis'
import type express from 'express'
import Redis, { Cluster } from 'ioredis'
import { createClient, createCluster } from 'redis'

export function standalone(app: express.Express): void {
  // #region standalone
  const client = new Redis({
    host: '10.0.0.5',
    retryStrategy: (times) => Math.min(times * 50, 500), // reconnect within half a second, not ioredis's 2 s
    enableOfflineQueue: false, // while disconnected, fail at once rather than queue
    autoResendUnfulfilledCommands: false, // never charge twice a request that was answered locally meanwhile
  })
  const store = new RedisStore({ client }) // timeout 100 ms, onError 'local'
  app.use(rateLimit({ limit: 100, window: '1m', store }))
  app.post('/login', rateLimit({ name: 'login', limit: 5, window: '15m', store }))
  // #endregion standalone
}

export async function nodeRedis(app: express.Express): Promise<void> {
  // #region node-redis
  const client = createClient({
    socket: { host: '10.0.0.5', reconnectStrategy: (retries) => Math.min(retries * 50, 500) },
    disableOfflineQueue: true, // while disconnected, fail at once rather than queue
  })
  client.on('error', (error) => console.warn('redis:', error.message)) // node-redis throws errors nobody listens to
  await client.connect()
  const store = new RedisStore({ client })
  app.use(rateLimit({ limit: 100, window: '1m', store }))

  const cluster = createCluster({
    rootNodes: [{ socket: { host: '10.0.0.5', port: 7000 } }],
    defaults: { disableOfflineQueue: true }, // for every node's connection
  })
  cluster.on('error', (error) => console.warn('redis cluster:', error.message))
  await cluster.connect()
  const clusterStore = new RedisStore({ client: cluster })
  // #endregion node-redis
  void clusterStore
}

export function cluster(): void {
  // #region cluster
  const client = new Cluster([{ host: '10.0.0.5', port: 7000 }], {
    retryDelayOnFailover: 0, // never resend, later, a call the store has answered by onError
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 3, // TRYAGAIN retries (16 at most) end well within the timeout
    slotsRefreshTimeout: 200, // a hung node delays a refresh of the slot map by this much at most
  })
  const store = new RedisStore({ client })
  const limiter = createLimiter({
    store,
    rules: [
      { name: 'user', limit: 100, window: '1m' },
      { name: 'tenant', limit: 2000, window: '1m' },
    ],
  })
  // #endregion cluster
  void limiter
}

export function policies(client: Redis): void {
  // #region policies
  const everyInstanceAlone = new RedisStore({ client }) // onError: 'local', the default
  const admitEveryone = new RedisStore({ client, onError: 'open' })
  const refuseWith503 = new RedisStore({ client, onError: 'closed', timeout: 50 })
  // #endregion policies
  void [everyInstanceAlone, admitEveryone, refuseWith503]
}

export function leases(app: express.Express, client: Redis): void {
  // #region leases
  const leases = new RedisLeaseStore({ client })
  app.use('/export', concurrencyLimit({ limit: 2, lease: '30s', store: leases })) // 2 in flight per client, fleet-wide
  // #endregion leases
}

export async function keyErrors(limiter: Limiter, userId: string): Promise<boolean> {
  // #region key-error
  try {
    return (await limiter.consume(`user:${userId}`)).allowed
  } catch (error) {
    // Redis is fine, but what it holds under this one key is unusable (something else wrote there): this key alone
    // fails, and the store has logged it once (the key by its keyHash, unless eventKeys is 'raw'). limiter.reset(key)
    // clears it, once you know what wrote there.
    if (error instanceof StoreKeyError) return false
    throw error
  }
  // #endregion key-error
}
