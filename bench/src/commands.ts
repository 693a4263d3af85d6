// Part 5: Redis commands per request, from INFO commandstats deltas: one rule, three stacked rules, and a key
// rejected under the local short-circuit; the peers beside them for reference.
import { createLimiter, type Limiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import Redis from 'ioredis'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { exactly, mark, type PartResult, settings, type TargetCheck } from './harness'
import { commandStats, rateLimitRedisStore, startRedis, statsBetween } from './redis-env'

interface Case {
  readonly name: string
  /** Calls made before counting starts (loading the script, or getting the key rejected). */
  prepare(): Promise<unknown>
  /** The i-th request. */
  request(i: number): Promise<unknown>
  /** EVALSHA per request this case must make, when it has a target. */
  readonly target?: number
  /** Why this case has its target. */
  readonly reason?: string
}

function sluice(client: Redis, options: Parameters<typeof createLimiter>[0]): Limiter {
  return createLimiter({ ...options, store: new RedisStore({ client, timeout: 5000, onError: 'closed' }) })
}

function cases(connect: () => Redis): Case[] {
  const one = sluice(connect(), { limit: 1000, window: '1m' })
  const stacked = sluice(connect(), {
    rules: [
      { name: 'user', limit: 1000, window: '1m' },
      { name: 'tenant', limit: 100_000, window: '1m' },
      { name: 'global', limit: 10_000_000, window: '1s', algorithm: 'token-bucket' },
    ],
  })
  // A name of its own: its limit is not the first case's, and separate stores in one key space warn about that.
  const rejecting = sluice(connect(), { name: 'hot', limit: 1, window: '1m' })
  const flexible = new RateLimiterRedis({ storeClient: connect(), points: 1000, duration: 60, keyPrefix: 'a' })
  const flexibleRejecting = new RateLimiterRedis({ storeClient: connect(), points: 1, duration: 60, keyPrefix: 'b' })
  const client = connect()
  const rateLimitRedis = rateLimitRedisStore(client, 60_000)
  return [
    {
      name: 'sluice, one rule',
      prepare: () => one.consume('warm-up'),
      request: (i) => one.consume(`user:${i}`),
      target: 1,
      reason: 'one round trip per request',
    },
    {
      name: 'sluice, three stacked rules',
      prepare: () => stacked.consume(['warm-up', 'warm-up', 'all']),
      request: (i) => stacked.consume([`user:${i}`, `tenant:${i % 10}`, 'all']),
      target: 1,
      reason: 'one round trip per request, whatever the number of rules',
    },
    {
      name: 'sluice, rejected key (local short-circuit)',
      // The first request is admitted, the second rejected by Redis; from then on the key is rejected locally.
      prepare: async () => {
        await rejecting.consume('hot')
        await rejecting.consume('hot')
      },
      request: () => rejecting.consume('hot'),
      target: 0,
      reason: 'a flood from one rejected key never reaches Redis',
    },
    {
      name: 'rate-limiter-flexible',
      prepare: () => flexible.consume('warm-up'),
      request: (i) => flexible.consume(`user:${i}`),
    },
    {
      name: 'rate-limiter-flexible, rejected key',
      prepare: () => flexibleRejecting.consume('hot').then(() => flexibleRejecting.consume('hot').catch(() => {})),
      request: () => flexibleRejecting.consume('hot').catch(() => {}),
    },
    {
      name: 'express-rate-limit + rate-limit-redis',
      prepare: () => rateLimitRedis.increment('warm-up'),
      request: (i) => rateLimitRedis.increment(`user:${i}`),
    },
  ]
}

/** Runs part 5 and returns its table and target checks. */
export async function runCommands(): Promise<PartResult> {
  const requests = settings.tiny ? 100 : 2000
  const server = await startRedis()
  const clients: Redis[] = []
  const connect = () => {
    const client = new Redis({ host: server.host, port: server.port })
    clients.push(client)
    return client
  }
  const admin = connect()
  const rows: (string | number)[][] = []
  const targets: TargetCheck[] = []
  try {
    for (const c of cases(connect)) {
      await c.prepare()
      await Promise.all(clients.map((client) => client.ping()))
      const before = await commandStats(admin)
      for (let i = 0; i < requests; i++) await c.request(i)
      const delta = statsBetween(before, await commandStats(admin))
      const evalsha = (delta.get('evalsha')?.calls ?? 0) / requests
      const all = [...delta.values()].reduce((sum, stat) => sum + stat.calls, 0) / requests
      const usec = (delta.get('evalsha')?.usec ?? 0) / requests
      const breakdown = [...delta]
        .map(([command, stat]) => `${command} ${+(stat.calls / requests).toFixed(3)}`)
        .join(', ')
      let targetText = ''
      let passed = ''
      if (c.target !== undefined) {
        const checked = exactly(`Redis commands: ${c.name}, EVALSHA per request`, evalsha, c.target, c.reason ?? '')
        targets.push(checked)
        targetText = checked.target
        passed = mark(checked)
      }
      rows.push([c.name, requests, evalsha, all, breakdown || 'none', usec, targetText, passed])
    }
  } finally {
    for (const client of clients) client.disconnect()
    await server.stop()
  }
  return {
    title: '5. Redis commands per request (INFO commandstats)',
    method:
      `Each case makes ${requests} requests one after another (distinct keys unless the case says otherwise) after ` +
      'a warm-up call; the table gives the INFO commandstats deltas per request. Commands a script runs (TIME, GET, ' +
      'SET, ...) are counted by Redis too, so "all commands" includes them; "EVALSHA µs" is the time Redis spent ' +
      "in EVALSHA per request (usec of commandstats), the server's cost of one decision. One rule: sliding window, " +
      'limit 1000 per minute; stacked: user (1000/min), tenant (100 000/min) and global (token bucket, 1e7/s) on ' +
      'one node; rejected key: limit 1 per minute, after one admitted and one rejected request.',
    tables: [
      {
        title: 'Commands per request',
        columns: [
          { header: 'case', kind: 'text' },
          { header: 'requests', kind: 'count' },
          { header: 'EVALSHA / request', kind: 'count' },
          { header: 'all commands / request', kind: 'count' },
          { header: 'per request, by command', kind: 'text' },
          { header: 'EVALSHA µs / request', kind: 'micros' },
          { header: 'target', kind: 'text' },
          { header: '', kind: 'text' },
        ],
        rows,
      },
    ],
    targets,
  }
}
