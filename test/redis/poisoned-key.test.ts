// One key that something else wrote (a list, a hash, bytes that are no rate-limit state) concerns that key alone:
// its requests fail (the HTTP layer's onError answers them), it is logged once, and every other user is still decided
// by Redis, exactly. Redis itself is fine, so no outage is declared and nobody is decided from local memory.
import { type CompiledRule, createLimiter, type FailurePolicy, keyHash, StoreKeyError } from '@sluice/core'
import { rateLimit } from '@sluice/express'
import { RedisStore } from '@sluice/redis'
import express from 'express'
import type Redis from 'ioredis'
import request from 'supertest'
import { redisBlockKeyPrefix, redisKey, redisKeyOf } from '../../packages/redis/src/keys'
import { type ClientKind, type KindClient, kindClient, recommendedClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { STARVED_REDIS_TIMEOUT_MS } from '../../scripts/redis-suite'

const LIMIT = 3
const REQUESTS = 6

let server: RedisServer
let client: Redis
let nodeRedis: KindClient
const figures: string[] = []

beforeAll(async () => {
  server = await startRedis()
  client = await recommendedClient(server.port)
  nodeRedis = await kindClient('node-redis', server.port)
})

beforeEach(() => client.flushdb())

afterAll(async () => {
  client?.disconnect()
  nodeRedis?.close()
  await server?.stop()
  if (figures.length > 0) console.log(`poisoned-key figures:\n${figures.join('\n')}`)
})

/** Starts clear of an epoch-aligned window's last `marginMs` (by the Redis clock, which decides), as the race suite does. */
async function clearOfWindowBoundary(windowMs: number, marginMs: number): Promise<void> {
  const [seconds, micros] = await client.time()
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  const left = windowMs - (now % windowMs)
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 10))
}

const POISONS: readonly [string, (key: string) => Promise<unknown>][] = [
  ['a list (LPUSH)', (key) => client.lpush(key, 'job')],
  ['a hash (HSET)', (key) => client.hset(key, 'field', 'value')],
  ['bytes that are no rate-limit state (SET)', (key) => client.set(key, Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00]))],
]

describe.each<[ClientKind, FailurePolicy]>([
  ['ioredis', 'closed'],
  ['ioredis', 'local'],
  ['node-redis', 'local'],
])("%s, store onError '%s'", (kind, storePolicy) => {
  test.each(POISONS)(
    'a key holding %s fails its own requests only, logged once; everyone else is decided by Redis',
    async (_, poison) => {
      const lines: string[] = []
      const logger = { warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m), info: () => {} }
      // A timeout no starved redis-server misses: this suite tests key errors, not deadlines (under load the default
      // 100 ms declared Redis down and bob's and mallory's requests were decided from local memory).
      const store = new RedisStore({
        client: kind === 'ioredis' ? client : nodeRedis.client,
        onError: storePolicy,
        logger,
        timeout: STARVED_REDIS_TIMEOUT_MS,
      })
      const limit = rateLimit({ limit: LIMIT, window: '1m', store, logger, key: (req) => String(req.query['user']) })
      const app = express()
      app.get('/', limit, (_req, res) => {
        res.send('ok')
      })
      // The same rule, to name its Redis keys and read its counts (on a store of its own: the same key space).
      const counts = createLimiter({
        limit: LIMIT,
        window: '1m',
        store: new RedisStore({ client, timeout: STARVED_REDIS_TIMEOUT_MS }),
      })
      const rule = counts.rules[0] as CompiledRule
      await poison(redisKeyOf(rule, 'mallory'))

      // The counts are read after the requests, in the same window: under load a run of the requests took seconds,
      // and one that crossed a minute read Redis's count of the next window (remaining 1, not 0).
      await clearOfWindowBoundary(60_000, 10_000)
      const statuses: Record<string, number[]> = { alice: [], mallory: [], bob: [] }
      for (let i = 0; i < REQUESTS; i++) {
        for (const user of Object.keys(statuses)) {
          statuses[user]?.push((await request(app).get(`/?user=${user}`)).status)
        }
      }
      figures.push(`  ${kind}, ${storePolicy}, ${_}: ${JSON.stringify(statuses)}; log: ${JSON.stringify(lines)}`)

      // The HTTP layer's onError ('closed' by default) answers the poisoned key's requests: 503, never a local count.
      expect(statuses['mallory']).toEqual(Array(REQUESTS).fill(503))
      for (const user of ['alice', 'bob']) {
        expect(statuses[user]).toEqual([...Array(LIMIT).fill(200), ...Array(REQUESTS - LIMIT).fill(429)])
        // Redis decided them: it holds their full count.
        expect((await counts.peek(user)).remaining).toBe(0)
      }
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain(keyHash('mallory'))
      expect(lines[0]).not.toMatch(/unavailable/i)
      // The key was left as it was found: the store does not overwrite what it cannot read.
      expect(await client.exists(redisKeyOf(rule, 'mallory'))).toBe(1)
    },
  )
})

test("a block key holding a list fails that key's requests alone, and is left as it was found", async () => {
  const lines: string[] = []
  const logger = { warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m), info: () => {} }
  const store = new RedisStore({ client, logger })
  const options = { limit: LIMIT, window: '1m', block: '15m', store } as const
  const limiter = createLimiter({ ...options, logger })
  const rule = limiter.rules[0] as CompiledRule
  const blockKey = redisKey(redisBlockKeyPrefix(rule), 'mallory')
  await client.lpush(blockKey, 'job')

  await expect(limiter.consume('mallory')).rejects.toThrow(StoreKeyError)
  await expect(limiter.consume('mallory')).rejects.toThrow(StoreKeyError)
  for (let i = 0; i < LIMIT; i++) expect((await limiter.consume('alice')).allowed).toBe(true)
  expect((await limiter.consume('alice')).allowed).toBe(false)
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(keyHash('mallory'))
  expect(await client.type(blockKey)).toBe('list')
  // Nothing was counted for mallory either: the script stopped before writing.
  expect(await client.exists(redisKeyOf(rule, 'mallory'))).toBe(0)
})
