// The set-up a Redis test file repeats: its own redis-server and a client on it for the file's tests, and the
// command counts it reads from INFO commandstats (what Redis did, never the wall clock).
import type Redis from 'ioredis'
import { recommendedClient } from './redis-clients'
import { type RedisServer, startRedis } from './redis-server'

/**
 * A store `timeout` for suites that test something other than deadlines (a script's clock, its cost in Redis, a
 * log's layout): on a loaded 2-core machine a starved redis-server can miss the default 100 ms, and the store then
 * decides by `onError`, by design, instead of by Redis. No starved server misses this one.
 */
export const STARVED_REDIS_TIMEOUT_MS = 10_000

/** A private redis-server and a client with the recommended options, connected to it. */
export interface PrivateRedis {
  readonly server: RedisServer
  readonly client: Redis
}

/**
 * Starts a private redis-server and a recommended client before the first test of the calling file and stops both
 * after its last; `ready` receives them once they are up. With `resetEachTest`, every test starts on an empty
 * database with the command counts reset (FLUSHDB, CONFIG RESETSTAT).
 */
export function privateRedis(ready: (redis: PrivateRedis) => void, options: { resetEachTest?: boolean } = {}): void {
  let redis: PrivateRedis | undefined
  beforeAll(async () => {
    const server = await startRedis()
    redis = { server, client: await recommendedClient(server.port) }
    ready(redis)
  })
  afterAll(async () => {
    redis?.client.disconnect()
    await redis?.server.stop()
  })
  if (options.resetEachTest === true) {
    beforeEach(async () => {
      await redis?.client.flushdb()
      await redis?.client.config('RESETSTAT')
    })
  }
}

/** How many times each command ran since the last CONFIG RESETSTAT (INFO commandstats), by its lowercase name. */
export async function commandCalls(client: Pick<Redis, 'info'>): Promise<Record<string, number>> {
  const info = await client.info('commandstats')
  const calls: Record<string, number> = {}
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1] as string] = Number(match[2])
  return calls
}
