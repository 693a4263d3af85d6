// examples/prometheus, run as its README says: requests over real HTTP, then a scrape of GET /metrics. On the
// memory store, and on a real redis-server that is killed and restarted (the short-circuit and the fallback).
import { MemoryStore } from '@sluice/core'
import type Redis from 'ioredis'
import { createApp } from '../../examples/prometheus/app'
import { replayStore } from '../../packages/redis/src/redis-store'
import { recommendedClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'
import { sample, serve, statuses } from './scrape'

const quietLogger = { warn: () => {}, error: () => {}, info: () => {} }
// Time stands still in these tests (2026-01-01T00:00:10Z), so no window boundary falls between two requests.
const NOW = 1_767_225_610_000

/** The labels of a sample of sluice_requests_total for limiter "api", in the order the exposition writes them. */
const api = (rule: string, outcome: string) => ({ limiter: 'api', rule, outcome })

/** A promise and its resolve, for a handler the test holds until it lets it go. */
function gate() {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`)
  expect(response.status).toBe(200)
  return response.text()
}

test('on the memory store: 5 admitted and 2 rejected by rule "burst" of limiter "api", each decision timed', async () => {
  const { app, close } = createApp({ store: new MemoryStore({ clock: () => NOW }) })
  const server = await serve(app)
  try {
    expect(await statuses(`${server.url}/items`, 7)).toEqual([200, 200, 200, 200, 200, 429, 429])
    const text = await scrape(server.url)
    expect(sample(text, 'sluice_requests_total', api('burst', 'admitted'))).toBe(5)
    expect(sample(text, 'sluice_requests_total', api('burst', 'rejected'))).toBe(2)
    expect(sample(text, 'sluice_requests_total', api('hourly', 'admitted'))).toBe(5)
    // The hourly rule never refused: a request rejected by "burst" is not counted against it.
    expect(sample(text, 'sluice_requests_total', api('hourly', 'rejected'))).toBeUndefined()
    expect(sample(text, 'sluice_store_latency_seconds_count', { limiter: 'api' })).toBe(7)
    expect(sample(text, 'sluice_store_latency_seconds_bucket', { le: '+Inf', limiter: 'api' })).toBe(7)
    expect(sample(text, 'sluice_short_circuit_total', { limiter: 'api' })).toBeUndefined()
  } finally {
    close()
    await server.close()
  }
})

test("two limiters whose one rule is 'default' are two series, told apart by their limiter label", async () => {
  const { app, close } = createApp({ store: new MemoryStore({ clock: () => NOW }) })
  const server = await serve(app)
  try {
    // Far below both limits (20 a minute, 5 a quarter), so every request is admitted whatever the clock says.
    expect(await statuses(`${server.url}/search`, 2, 'dana')).toEqual([200, 200])
    expect((await fetch(`${server.url}/login`, { method: 'POST' })).status).toBe(200)
    const text = await scrape(server.url)
    const admitted = (limiter: string) =>
      sample(text, 'sluice_requests_total', { limiter, rule: 'default', outcome: 'admitted' })
    expect([admitted('search'), admitted('login')]).toEqual([2, 1])
    // Every request went through the api limiter too, under its own label.
    expect(sample(text, 'sluice_requests_total', api('burst', 'admitted'))).toBe(3)
  } finally {
    close()
    await server.close()
  }
})

test('a concurrency limit: the slot a running export holds is in sluice_concurrency_in_flight; a second is refused', async () => {
  const running = gate()
  const release = gate()
  const { app, close } = createApp({
    store: new MemoryStore({ clock: () => NOW }),
    exportCsv: () => {
      running.open()
      return release.opened
    },
  })
  const server = await serve(app)
  try {
    const first = fetch(`${server.url}/export`, { headers: { 'x-api-key': 'alice' } })
    await running.opened
    expect(await statuses(`${server.url}/export`, 1, 'alice')).toEqual([429])
    const text = await scrape(server.url)
    expect(sample(text, 'sluice_concurrency_in_flight', { limiter: 'export' })).toBe(1)
    release.open()
    expect((await first).status).toBe(200)
  } finally {
    close()
    await server.close()
  }
})

test('load shedding: a request shed while the one slot is taken is in sluice_shed_total, the slot in the gauges', async () => {
  const running = gate()
  const release = gate()
  const { app, close } = createApp({
    store: new MemoryStore({ clock: () => NOW }),
    shed: { maxInFlight: 1, queue: 0 },
    exportCsv: () => {
      running.open()
      return release.opened
    },
  })
  const server = await serve(app)
  try {
    const first = fetch(`${server.url}/export`, { headers: { 'x-api-key': 'alice' } })
    await running.opened
    expect(await statuses(`${server.url}/items`, 2, 'bob')).toEqual([503, 503])
    const text = await scrape(server.url)
    expect(sample(text, 'sluice_shed_total', { reason: 'overloaded', priority: 'normal' })).toBe(2)
    expect(sample(text, 'sluice_shed_in_flight')).toBe(1)
    expect(sample(text, 'sluice_shed_waiting')).toBe(0)
    expect(sample(text, 'sluice_shed_limit')).toBe(1)
    // A shed request never reached the rate limiter.
    expect(sample(text, 'sluice_requests_total', api('burst', 'admitted'))).toBe(1)
    release.open()
    expect((await first).status).toBe(200)
  } finally {
    close()
    await server.close()
  }
})

describe('on Redis', () => {
  let redis: RedisServer
  let client: Redis

  beforeAll(async () => {
    redis = await startRedis()
    client = await recommendedClient(redis.port, { retryStrategy: () => 50 })
    client.on('error', () => {}) // expected while the server is down
  })

  afterAll(async () => {
    client?.disconnect()
    await redis?.stop()
  })

  test('a rejected client is refused by Redis each time while its hourly count may fade; the fallback gauge is 1 while Redis is down', async () => {
    const store = replayStore({ client, clock: () => NOW, logger: quietLogger })
    const { app, close } = createApp({ store })
    const server = await serve(app)
    try {
      expect(await statuses(`${server.url}/items`, 7)).toEqual([200, 200, 200, 200, 200, 429, 429])
      let text = await scrape(server.url)
      expect(sample(text, 'sluice_requests_total', api('burst', 'admitted'))).toBe(5)
      expect(sample(text, 'sluice_requests_total', api('burst', 'rejected'))).toBe(2)
      // Redis decided all seven: the short-circuit answers only what Redis would, and the hourly rule, which admits, is
      // a sliding window whose count may fade before the burst rule's retry time (see "The local short-circuit").
      expect(sample(text, 'sluice_store_latency_seconds_count', { limiter: 'api' })).toBe(7)
      // Never counted, so the counter has no series for the limiter.
      expect(sample(text, 'sluice_short_circuit_total', { limiter: 'api' }) ?? 0).toBe(0)
      expect(sample(text, 'sluice_fallback_active', { node: 'Redis' })).toBeUndefined()

      await redis.kill()
      // Another client, while Redis is down: the fallback decides.
      await statuses(`${server.url}/items`, 2, 'bob')
      text = await scrape(server.url)
      expect(sample(text, 'sluice_fallback_active', { node: 'Redis' })).toBe(1)

      await redis.restart()
      // Redis is asked again (a probe) only while requests arrive.
      for (let i = 0; i < 300 && sample(text, 'sluice_fallback_active', { node: 'Redis' }) !== 0; i++) {
        await statuses(`${server.url}/items`, 1, `client-${i}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
        text = await scrape(server.url)
      }
      expect(sample(text, 'sluice_fallback_active', { node: 'Redis' })).toBe(0)
    } finally {
      close()
      await server.close()
    }
  }, 20_000)
})
