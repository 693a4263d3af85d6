import { RedisStore, type RedisStoreClient } from '@sluice/redis'
import Redis, { Cluster } from 'ioredis'
import { createClient, createCluster } from 'redis'
import { storeClientOf } from '../src/client'
import { riskyClientOptions } from '../src/client-options'

// lazyConnect (ioredis), no connect() (node-redis): these clients are only read, never connected.
const options = (client: RedisStoreClient, timeoutMs = 100) =>
  riskyClientOptions(storeClientOf(client), timeoutMs).map(({ option, recommended }) => `${option}: ${recommended}`)

test("ioredis's defaults let a call the store gave up on be sent again later: the store names each option", () => {
  expect(options(new Redis({ lazyConnect: true }))).toEqual([
    'enableOfflineQueue: false',
    'autoResendUnfulfilledCommands: false',
  ])
  expect(options(new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true }))).toEqual([
    'retryDelayOnFailover: 0',
    'retryDelayOnClusterDown: 0',
    // 16 retries after TRYAGAIN must end within half the 100 ms timeout.
    'retryDelayOnTryAgain: 3',
  ])
})

test('the options the README recommends pass', () => {
  const redis = new Redis({ lazyConnect: true, enableOfflineQueue: false, autoResendUnfulfilledCommands: false })
  expect(options(redis)).toEqual([])
  const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], {
    lazyConnect: true,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 3,
  })
  expect(options(cluster)).toEqual([])
  // A longer timeout leaves room for slower TRYAGAIN retries; a shorter one does not.
  expect(options(cluster, 80)).toEqual(['retryDelayOnTryAgain: 2'])
})

test('Cluster nodes that reconnect must not resend either', () => {
  const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], {
    lazyConnect: true,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 3,
    clusterNodeRetryStrategy: () => 100,
  })
  expect(options(cluster)).toEqual(['redisOptions.autoResendUnfulfilledCommands: false'])
})

test('a store warns once per client, however many stores share it, naming the options and what to set', () => {
  const client = new Redis({ lazyConnect: true })
  const warnings: string[] = []
  const logger = { warn: (m: string) => warnings.push(m), error: () => {} }
  new RedisStore({ client, logger })
  new RedisStore({ client, logger, onError: 'closed' })
  expect(warnings).toHaveLength(1)
  expect(warnings[0]).toContain(
    'enableOfflineQueue (calls made while the connection is down are sent once it is back; set false)',
  )
  expect(warnings[0]).toContain('autoResendUnfulfilledCommands')
})

test("node-redis's offline queue would send a call the store gave up on once the connection is back: it is named", () => {
  expect(options(createClient({ url: 'redis://127.0.0.1:1' }))).toEqual(['disableOfflineQueue: true'])
  expect(options(createClient({ url: 'redis://127.0.0.1:1', disableOfflineQueue: true }))).toEqual([])
  const rootNodes = [{ url: 'redis://127.0.0.1:1' }]
  expect(options(createCluster({ rootNodes }))).toEqual(['defaults.disableOfflineQueue: true'])
  expect(options(createCluster({ rootNodes, defaults: { disableOfflineQueue: true } }))).toEqual([])
})

test('a store warns once about a node-redis client too, naming the library', () => {
  const client = createClient({ url: 'redis://127.0.0.1:1' })
  const warnings: string[] = []
  const logger = { warn: (m: string) => warnings.push(m), error: () => {} }
  new RedisStore({ client, logger })
  new RedisStore({ client, logger })
  expect(warnings).toHaveLength(1)
  expect(warnings[0]).toContain('options of its node-redis client')
  expect(warnings[0]).toContain(
    'disableOfflineQueue (calls made while the connection is down are sent once it is back; set true)',
  )
})
