// An outage's probes go out while requests arrive, including requests the short-circuit answers without a call: when
// every key in use is full (refused locally until its window ends), Redis's return is still noticed and logged, and
// the next request that needs Redis is decided by it rather than by the local stand-in.
import { createLimiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import type Redis from 'ioredis'
import { recommendedClient } from '../../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../../scripts/redis-server'

let server: RedisServer
let client: Redis

beforeAll(async () => {
  server = await startRedis()
  // A short, steady reconnect delay, so that the client is back soon after the server.
  client = await recommendedClient(server.port, { retryStrategy: () => 20 })
  client.on('error', () => {}) // connection errors while the server is down are expected here
})

afterAll(async () => {
  client?.disconnect()
  await server?.stop()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test('Redis coming back is noticed while every request is answered by the short-circuit', async () => {
  const log = { warnings: [] as string[], infos: [] as string[] }
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 1,
    window: '1h',
    store: new RedisStore({
      client,
      // The case is an instance whose every request stays answered by the short-circuit across the restart, however
      // long the restart takes on a busy machine; by default a rejection is asked of Redis again after a second.
      shortCircuitMaxMs: 600_000,
      logger: { warn: (m) => log.warnings.push(m), error: () => {}, info: (m) => log.infos.push(m) },
    }),
  })
  expect((await limiter.consume('full')).allowed).toBe(true)
  expect((await limiter.consume('full')).allowed).toBe(false) // Redis's refusal: the short-circuit now knows it

  await server.kill()
  // A request for another key finds Redis gone: the outage starts, and 'other' is decided locally.
  expect((await limiter.consume('other')).allowed).toBe(true)
  expect(log.warnings).toHaveLength(1)

  await server.restart()
  await new Promise((resolve) => (client.status === 'ready' ? resolve(undefined) : client.once('ready', resolve)))
  // Only the full key is asked for now: each answer is the short-circuit's, and each lets a due probe go.
  for (let i = 0; i < 500 && log.infos.length === 0; i++) {
    expect((await limiter.consume('full')).allowed).toBe(false)
    await sleep(20)
  }
  expect(log.infos).toHaveLength(1)
  expect(log.infos[0]).toMatch(/^sluice: Redis answers again after \d+ ms; decisions come from Redis again$/)
  // The next request that needs Redis is Redis's: 'other' was counted only locally, and the local counts are dropped.
  const { allowed } = await limiter.consume('other')
  expect(allowed).toBe(true)
  expect(await client.exists('sluice:default:fw:{other}')).toBe(1)
  expect(log.warnings).toHaveLength(1)
})
