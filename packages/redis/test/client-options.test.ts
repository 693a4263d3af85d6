import { RedisStore } from '@sluice/redis'
import Redis, { Cluster } from 'ioredis'
import { riskyClientOptions } from '../src/client-options'

// lazyConnect: these clients are only read, never connected.
const options = (client: Redis | Cluster, timeoutMs = 100) =>
  riskyClientOptions(client, timeoutMs).map(({ option, recommended }) => `${option}: ${recommended}`)

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
