// What sluice:decision and sluice:store carry for a RedisStore on a real redis-server: where each decision came from
// (Redis, the short-circuit, the fallback), an outage and its fallback when the server dies, the recovery when it is
// back, a key whose state is unusable, and a store failing closed.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import {
  type CompiledRule,
  createLimiter,
  type DecisionEvent,
  type DecisionSource,
  keyHash,
  type StoreEvent,
} from '@sluice/core'
import type { FailurePolicy, RedisStore } from '@sluice/redis'
import type Redis from 'ioredis'
import { redisKeyOf } from '../../packages/redis/src/keys'
import { replayStore } from '../../packages/redis/src/redis-store'
import { scriptFor } from '../../packages/redis/src/script'
import { recommendedClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'

const LIMIT = 2
const quietLogger = { warn: () => {}, error: () => {}, info: () => {} }

let server: RedisServer
const decisions: DecisionEvent[] = []
const storeEvents: StoreEvent[] = []
const onDecision = (message: unknown) => decisions.push(message as DecisionEvent)
const onStore = (message: unknown) => storeEvents.push(message as StoreEvent)

beforeAll(async () => {
  server = await startRedis()
  subscribe('sluice:decision', onDecision)
  subscribe('sluice:store', onStore)
})

afterAll(async () => {
  unsubscribe('sluice:decision', onDecision)
  unsubscribe('sluice:store', onStore)
  await server?.stop()
})

beforeEach(async () => {
  if (!server.running) await server.restart()
  decisions.length = 0
  storeEvents.length = 0
})

async function setUp(onError: FailurePolicy): Promise<{ client: Redis; store: RedisStore }> {
  // A short, steady reconnect delay: ioredis's default grows to 2 s between attempts.
  const client = await recommendedClient(server.port, { retryStrategy: () => 50 })
  client.on('error', () => {}) // connection errors while the server is down are expected here
  await client.flushdb()
  // Loaded before the clock matters: on a busy machine the first call (NOSCRIPT, EVAL) could outlast the timeout.
  await client.script('LOAD', scriptFor(['fw']).source)
  // Time stands still (2026-01-01T00:00:10Z), so no window boundary falls between two requests.
  return { client, store: replayStore({ client, onError, logger: quietLogger, clock: () => 1_767_225_610_000 }) }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test('decisions say whether Redis, the short-circuit or the fallback made them; an outage, its fallback and the recovery are published once', async () => {
  const { client, store } = await setUp('local')
  const limiter = createLimiter({ algorithm: 'fixed-window', limit: LIMIT, window: '1h', store })
  try {
    const sources: [DecisionSource, boolean][] = []
    for (let i = 0; i < LIMIT + 2; i++) {
      const decision = await limiter.consume('user:7')
      const event = decisions.at(-1) as DecisionEvent
      expect(event.decision).toBe(decision)
      sources.push([event.source, event.allowed])
    }
    // Redis admits the limit and rejects the next; the one after is refused locally, without a round trip.
    expect(sources).toEqual([
      ['store', true],
      ['store', true],
      ['store', false],
      ['short-circuit', false],
    ])
    expect(decisions[0]?.rules[0]).toMatchObject({ rule: 'default', keyHash: keyHash('user:7'), remaining: 1 })
    expect(decisions[0]?.storeLatencyMs).toBeGreaterThan(0)
    expect(storeEvents).toEqual([])

    await server.kill()
    // Until the client notices, a call may wait out the timeout; then the fallback decides every request.
    for (let i = 0; i < 3; i++) await limiter.consume('user:8')
    expect(storeEvents.map((e) => e.type)).toEqual(['outage', 'fallback'])
    expect(storeEvents[0]).toMatchObject({ type: 'outage', node: 'Redis' })
    expect(storeEvents[1]).toEqual({ type: 'fallback', node: 'Redis', onError: 'local' })
    expect(decisions.slice(-3).map((e) => [e.source, e.allowed])).toEqual([
      ['fallback', true],
      ['fallback', true],
      ['fallback', false],
    ])

    await server.restart()
    // Probes are sent while requests arrive: keep asking until Redis answers again.
    for (let i = 0; i < 300 && !storeEvents.some((e) => e.type === 'recovered'); i++) {
      await limiter.consume(`after:${i}`)
      await pause(10)
    }
    expect(storeEvents.map((e) => e.type)).toEqual(['outage', 'fallback', 'recovered'])
    const recovered = storeEvents[2] as StoreEvent & { type: 'recovered' }
    expect(recovered.node).toBe('Redis')
    expect(recovered.outageMs).toBeGreaterThan(0)
    await limiter.consume('user:9')
    expect(decisions.at(-1)?.source).toBe('store')
  } finally {
    client.disconnect()
  }
}, 20_000)

test("a key holding a list publishes a 'key-error' naming its rule, and no outage", async () => {
  const { client, store } = await setUp('local')
  const limiter = createLimiter({
    eventKeys: 'raw',
    rules: [
      { name: 'user', limit: 5, window: '1m' },
      { name: 'tenant', limit: 50, window: '1m' },
    ],
    store,
  })
  try {
    await client.lpush(redisKeyOf(limiter.rules[1] as CompiledRule, 'tenant:poisoned'), 'job')
    await expect(limiter.consume(['user:1', 'tenant:poisoned'])).rejects.toThrow(/tenant/)
    await limiter.consume(['user:1', 'tenant:fine'])
    expect(storeEvents).toHaveLength(1)
    expect(storeEvents[0]).toMatchObject({
      type: 'key-error',
      rule: 'tenant',
      key: 'tenant:poisoned',
      keyHash: keyHash('tenant:poisoned'),
    })
    expect(decisions.map((e) => [e.source, e.allowed])).toEqual([['store', true]])
  } finally {
    client.disconnect()
  }
})

// Under the default eventKeys ('hash') the event carried keyHash alone, but its error (error.key, error.message) and the
// store's log line carried the raw key, an API key here.
test('a key-error under the default eventKeys shows the key nowhere: not in the event, its error, nor the log line', async () => {
  const { client } = await setUp('local')
  const logged: string[] = []
  const logger = { warn: (m: string) => logged.push(m), error: (m: string) => logged.push(m) }
  const store = replayStore({ client, onError: 'local', logger, clock: () => 1_767_225_610_000 })
  const limiter = createLimiter({ name: 'apikey', limit: 5, window: '1m', store })
  const secret = 'apikey:sk_live_51Hx9SECRET'
  try {
    await client.lpush(redisKeyOf(limiter.rules[0] as CompiledRule, secret), 'job')
    const error = await limiter.consume(secret).then(
      () => undefined,
      (e: unknown) => e as Error & { key?: string; keyHash?: string },
    )
    expect(storeEvents).toHaveLength(1)
    const event = storeEvents[0] as StoreEvent & { error: Error }
    expect(event).toMatchObject({ type: 'key-error', rule: 'apikey', keyHash: keyHash(secret) })
    expect(event).not.toHaveProperty('key')
    expect(error).toBe(event.error)
    expect(error?.key).toBeUndefined()
    expect(error?.keyHash).toBe(keyHash(secret))
    expect(error?.message).toContain(`keyHash ${keyHash(secret)}`)
    expect(logged).toHaveLength(1)
    for (const text of [error?.message, ...logged, JSON.stringify(event)]) expect(text).not.toContain('sk_live')
  } finally {
    client.disconnect()
  }
})

test("a store failing closed publishes 'unavailable' for each request it cannot decide", async () => {
  const { client, store } = await setUp('closed')
  const limiter = createLimiter({ algorithm: 'fixed-window', limit: LIMIT, window: '1h', store })
  try {
    await limiter.consume('user:1')
    await server.kill()
    for (let i = 0; i < 3; i++) await expect(limiter.consume('user:1')).rejects.toThrow(/unavailable/)
    expect(storeEvents.map((e) => e.type)).toEqual(['outage', 'fallback', 'unavailable', 'unavailable', 'unavailable'])
    expect(storeEvents[1]).toMatchObject({ onError: 'closed' })
    expect(storeEvents[2]).toMatchObject({ rule: 'default', keyHash: keyHash('user:1') })
  } finally {
    client.disconnect()
  }
})
