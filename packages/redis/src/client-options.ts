import { warnEach } from '@sluice/core/store'
import type { StoreClient } from './client'

/** What the check reads of a client: which library made it, whether it is a Cluster, and the client itself. */
export type OptionsOf = Pick<StoreClient, 'library' | 'isCluster' | 'given'>

/** An option that lets a call the store gave up on run later, and what to set instead. */
export interface RiskyOption {
  readonly option: string
  readonly recommended: string
  readonly why: string
}

const clientsWarned = new WeakSet<object>()

/**
 * The client options under which a call this store has given up on (answered by `onError` instead) can still reach
 * Redis later and be counted there too: the client holds or resends it, after the store's deadline.
 *
 * node-redis (see {@link riskyNodeRedisOptions}): only its offline queue. With ioredis:
 * - A single Redis's `enableOfflineQueue`: commands issued while the connection is down wait and are sent once it is
 *   back. (A Cluster needs its offline queue; see below.)
 * - `autoResendUnfulfilledCommands` (a single Redis; on a Cluster only when its nodes reconnect): commands that were on
 *   the wire when the connection dropped are sent again after reconnecting.
 * - Cluster `retryDelayOnFailover`, `retryDelayOnClusterDown`, `retryDelayOnMoved`: a command is sent again that long
 *   after a closed connection, a CLUSTERDOWN or a MOVED, up to `maxRedirections` times.
 * - Cluster `retryDelayOnTryAgain` (which cannot be turned off): while a slot migrates, a command is sent again after
 *   that delay up to `maxRedirections` times; all of those retries must end within half of `timeoutMs`.
 *
 * @example
 * riskyClientOptions(storeClientOf(new Redis()), 100).map((risky) => risky.option)
 * // ['enableOfflineQueue', 'autoResendUnfulfilledCommands']
 * riskyClientOptions(storeClientOf(new Cluster(nodes)), 100).map((risky) => risky.option)
 * // ['retryDelayOnFailover', 'retryDelayOnClusterDown', 'retryDelayOnTryAgain']
 */
export function riskyClientOptions(client: OptionsOf, timeoutMs: number): RiskyOption[] {
  if (client.library === 'node-redis') return riskyNodeRedisOptions(client)
  const options = ((client.given as { options?: object }).options ?? {}) as Record<string, unknown>
  const risky: RiskyOption[] = []
  const check = checker(risky)
  const number = (name: string, fallback: number) => {
    const value = options[name]
    return typeof value === 'number' ? value : fallback
  }
  if (client.isCluster !== true) {
    check(
      'enableOfflineQueue',
      options['enableOfflineQueue'] === false,
      'false',
      'calls made while the connection is down are sent once it is back',
    )
    check(
      'autoResendUnfulfilledCommands',
      options['autoResendUnfulfilledCommands'] === false,
      'false',
      'calls on the wire when the connection dropped are sent again after reconnecting',
    )
    return risky
  }
  // A Cluster keeps its offline queue: without it ioredis refuses every call to a node whose connection is still being
  // made ("Connection is closed."), as it is at start and right after a failover. It holds calls only while the
  // client is not ready at all (every node unreachable).
  for (const [option, fallback, after] of [
    ['retryDelayOnFailover', 100, 'a closed connection'],
    ['retryDelayOnClusterDown', 100, 'CLUSTERDOWN'],
    ['retryDelayOnMoved', 0, 'MOVED'],
  ] as const) {
    check(option, number(option, fallback) === 0, '0', `calls are sent again that long after ${after}`)
  }
  const redirections = Math.max(1, number('maxRedirections', 16))
  // Half the timeout, so the round trips of the retries fit too: the retries of a call are replies the store cannot
  // see, and a node whose only calls are being retried looks silent.
  check(
    'retryDelayOnTryAgain',
    number('retryDelayOnTryAgain', 100) * redirections <= timeoutMs / 2,
    String(Math.floor(timeoutMs / 2 / redirections)),
    `calls are sent again up to maxRedirections (${redirections}) times after TRYAGAIN; that must end well within the timeout`,
  )
  const nodeOptions = (options['redisOptions'] ?? {}) as Record<string, unknown>
  if (typeof options['clusterNodeRetryStrategy'] === 'function') {
    check(
      'redisOptions.autoResendUnfulfilledCommands',
      nodeOptions['autoResendUnfulfilledCommands'] === false,
      'false',
      'nodes that reconnect send the calls that were on the wire again',
    )
  }
  return risky
}

/**
 * node-redis retries nothing on its own after the store's deadline but a MOVED or ASK redirection (at once): TRYAGAIN
 * and CLUSTERDOWN come back as errors, and a connection that drops rejects the calls on it. Its offline queue,
 * though, holds the calls made while a connection is down (a client's, or a cluster node's) and sends them once it is
 * back: `disableOfflineQueue` (a cluster's `defaults.disableOfflineQueue`) must be true. A cluster still waits for a
 * node's first connection before sending it anything, so that costs it nothing at start or after a failover.
 * node-redis 4 keeps a cluster's options private: they cannot be checked there.
 */
function riskyNodeRedisOptions(client: OptionsOf): RiskyOption[] {
  const given = client.given as { options?: object; _options?: { defaults?: object } }
  const options = (client.isCluster ? given._options?.defaults : given.options) as Record<string, unknown> | undefined
  const risky: RiskyOption[] = []
  if (client.isCluster && given._options === undefined) return risky
  checker(risky)(
    client.isCluster ? 'defaults.disableOfflineQueue' : 'disableOfflineQueue',
    options?.['disableOfflineQueue'] === true,
    'true',
    'calls made while the connection is down are sent once it is back',
  )
  return risky
}

function checker(risky: RiskyOption[]) {
  return (option: string, fine: boolean, recommended: string, why: string) => {
    if (!fine) risky.push({ option, recommended, why })
  }
}

/**
 * Warns once per client (however many stores share it) when its options let a call the store gave up on be counted
 * later, naming each option and the value to set.
 *
 * @example
 * warnAboutClientOptions(client, 100, console)
 */
export function warnAboutClientOptions(client: OptionsOf, timeoutMs: number, logger: { warn(m: string): void }): void {
  if (clientsWarned.has(client.given)) return
  const risky = riskyClientOptions(client, timeoutMs)
  if (risky.length === 0) return
  clientsWarned.add(client.given)
  warnEach(
    logger,
    'SLUICE_REDIS_CLIENT_OPTIONS',
    `sluice: with these options of its ${client.library} client, a call that the RedisStore gave up on (and answered by onError) ` +
      `can still reach Redis later and be counted twice: ${risky
        .map(({ option, recommended, why }) => `${option} (${why}; set ${recommended})`)
        .join(', ')}. See "Client options" in the README of @sluice/redis.`,
  )
}
