// What the Redis parts share: a private redis-server (through the test infrastructure in scripts/), its version,
// and INFO commandstats read as numbers.
import { spawnSync } from 'node:child_process'
import type { Options as ExpressRateLimitOptions } from 'express-rate-limit'
import type { Redis } from 'ioredis'
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis'

export { type RedisServer, startRedis } from '../../scripts/redis-server'

/** The version of the redis-server binary on the PATH, or 'not installed'. */
export function redisVersion(): string {
  const result = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  return /v=(\S+)/.exec(result.stdout ?? '')?.[1] ?? 'not installed'
}

/** One command's counters from INFO commandstats. */
export interface CommandStat {
  readonly calls: number
  /** Microseconds Redis spent in the command (for a script, including the commands it ran). */
  readonly usec: number
}

/** Counters per command since the server started, from INFO commandstats. */
export async function commandStats(client: Redis): Promise<Map<string, CommandStat>> {
  const info = await client.info('commandstats')
  const stats = new Map<string, CommandStat>()
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    stats.set(match[1] as string, { calls: Number(match[2]), usec: Number(match[3]) })
  }
  return stats
}

/** The counters each command gained from `before` to `after`; INFO itself is left out. */
export function statsBetween(
  before: Map<string, CommandStat>,
  after: Map<string, CommandStat>,
): Map<string, CommandStat> {
  const delta = new Map<string, CommandStat>()
  for (const [command, stat] of after) {
    const calls = stat.calls - (before.get(command)?.calls ?? 0)
    const usec = stat.usec - (before.get(command)?.usec ?? 0)
    if (calls > 0 && command !== 'info') delta.set(command, { calls, usec })
  }
  return delta
}

/** express-rate-limit's Redis store (rate-limit-redis) over an ioredis client, initialized for `windowMs`. */
export function rateLimitRedisStore(client: Redis, windowMs: number): RateLimitRedisStore {
  const store = new RateLimitRedisStore({
    sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<RedisReply>,
    prefix: 'rl:',
  })
  store.init({ windowMs } as ExpressRateLimitOptions)
  return store
}
