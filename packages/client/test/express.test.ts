import type { AlgorithmName } from '@sluice/core'
import fc from 'fast-check'
import { type PoliteFetchOptions, parseRateLimitHeaders, politeFetch, type RetryEvent, WaitTooLongError } from '../src'
import { EPOCH, type LimitedServer, startLimitedServer } from './helpers/express-server'
import { seededRandom } from './helpers/random'
import { VirtualTime } from './helpers/virtual-time'

// The client against real @sluice/express servers on loopback. Server and client share one virtual clock: the
// server's MemoryStore and Date header read it, the client sleeps on it, so every Retry-After is exact and a wait
// of seconds takes no time.

const servers: LimitedServer[] = []
async function limitedServer(...args: Parameters<typeof startLimitedServer>) {
  const server = await startLimitedServer(...args)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

/** Runs one politeFetch on the virtual clock and returns its response with the waits and retry events. */
async function politely(time: VirtualTime, url: string, init?: RequestInit, options: PoliteFetchOptions = {}) {
  const events: RetryEvent[] = []
  const [result] = await time.run([
    () =>
      politeFetch(url, init, {
        sleep: time.sleep,
        now: () => EPOCH + time.now,
        onRetry: (event) => events.push(event),
        ...options,
      }),
  ])
  if (result?.status !== 'fulfilled') throw result?.reason
  return { response: result.value, events, waits: events.map((event) => event.waitMs) }
}

/** Spends the whole allowance of the client's key (the loopback address) with plain fetches. */
async function exhaust(url: string) {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(url)
    await res.arrayBuffer()
    if (res.status === 429) return Number(res.headers.get('retry-after'))
  }
  throw new Error('the server never refused')
}

const ALGORITHMS: AlgorithmName[] = ['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'leaky-bucket']

describe('politeFetch against @sluice/express', () => {
  it('waits the Retry-After it is sent and is admitted on its next attempt, for every algorithm', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ALGORITHMS),
        fc.integer({ min: 0, max: 9_999 }),
        fc.constantFrom<'full' | 'none'>('full', 'none'),
        fc.integer(),
        async (algorithm, offsetMs, jitter, seed) => {
          const time = new VirtualTime()
          time.now = offsetMs
          const server = await limitedServer(time.clock, { algorithm, limit: 3, window: '10s', headers: 'ietf' })
          const retryAfterSeconds = await exhaust(server.url)
          const { response, events, waits } = await politely(time, server.url, undefined, {
            jitter,
            random: seededRandom(seed),
          })
          expect(response.status).toBe(200)
          expect(await response.text()).toBe('served')
          expect(events.map((event) => [event.attempt, event.source])).toEqual([[1, 'retry-after']])
          expect(waits[0]).toBeGreaterThanOrEqual(retryAfterSeconds * 1000)
          if (jitter === 'none') expect(waits).toEqual([retryAfterSeconds * 1000])
          else expect(waits[0]).toBeLessThanOrEqual(retryAfterSeconds * 1000 + 500)
        },
      ),
      { numRuns: 40, seed: 7 },
    )
  })

  it('honours a Retry-After sent as an HTTP-date, and is admitted on its next attempt', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 9_999 }), async (offsetMs) => {
        const time = new VirtualTime()
        time.now = offsetMs
        const server = await limitedServer(time.clock, {
          algorithm: 'fixed-window',
          limit: 2,
          window: '10s',
          // A server that prefers dates: rounded up to the second, as an HTTP-date has no finer resolution.
          onRejected: (_req, res, decision) => {
            const readyAt = Math.ceil((EPOCH + time.now + decision.retryAfterMs) / 1000) * 1000
            res.set('Retry-After', new Date(readyAt).toUTCString()).status(429).json({ error: 'rate limit exceeded' })
          },
        })
        await exhaust(server.url)
        const { response, waits, events } = await politely(time, server.url, undefined, { jitter: 'none' })
        expect(response.status).toBe(200)
        expect(events.map((event) => event.source)).toEqual(['retry-after'])
        // The wait is counted from the server's Date header, which is truncated to the second: the retry may come
        // up to a second after the window opened at 10 s, never before.
        expect(waits).toEqual([10_000 - Math.floor(offsetMs / 1000) * 1000])
        expect(server.arrivals.at(-1)).toBe(10_000 + (offsetMs % 1000))
      }),
      { numRuns: 25, seed: 11 },
    )
  })

  it('after maxAttempts it stops and returns the last 429 with its JSON body', async () => {
    const frozen = () => 5_000
    const server = await limitedServer(frozen, { algorithm: 'fixed-window', limit: 1, window: '10s' })
    await exhaust(server.url)
    const waits: number[] = []
    // The server's clock stands still, so it refuses every attempt with the same Retry-After.
    const response = await politeFetch(server.url, undefined, {
      maxAttempts: 3,
      jitter: 'none',
      sleep: async (ms) => {
        waits.push(ms)
      },
    })
    expect(response.status).toBe(429)
    expect(await response.json()).toEqual({ error: 'rate limit exceeded', retryAfter: 5 })
    expect(waits).toEqual([5000, 5000])
    expect(server.arrivals).toHaveLength(2 + 3)
  })

  it('gives up at once with a WaitTooLongError when the window is longer than maxWaitMs', async () => {
    const time = new VirtualTime()
    const server = await limitedServer(time.clock, { algorithm: 'fixed-window', limit: 1, window: '1h' })
    await exhaust(server.url)
    const failure = politely(time, server.url)
    await expect(failure).rejects.toBeInstanceOf(WaitTooLongError)
    const error = (await failure.catch((e: unknown) => e)) as WaitTooLongError
    expect(error.waitMs).toBe(3_600_000)
    expect(await error.response.json()).toEqual({ error: 'rate limit exceeded', retryAfter: 3600 })
    expect(time.now).toBe(0)
  })

  it('does not retry a POST without an idempotency key; with one, every retry carries the same key', async () => {
    const frozen = () => 0
    const server = await limitedServer(frozen, { algorithm: 'fixed-window', limit: 1, window: '10s' })
    await exhaust(server.url)
    const noSleep = { sleep: async () => undefined }
    const bare = await politeFetch(server.url, { method: 'POST', body: 'order' }, noSleep)
    expect(bare.status).toBe(429)
    expect(server.keys.slice(2)).toEqual([undefined])

    await politeFetch(server.url, { method: 'POST', body: 'order' }, { ...noSleep, idempotencyKey: true })
    const keyed = server.keys.slice(3)
    expect(keyed).toHaveLength(5)
    expect(new Set(keyed).size).toBe(1)
    expect(keyed[0]).toEqual(expect.any(String))
  })

  it('a POST with a key gets through once the window opens', async () => {
    const time = new VirtualTime()
    time.now = 2_500
    const server = await limitedServer(time.clock, { algorithm: 'fixed-window', limit: 1, window: '10s' })
    await exhaust(server.url)
    const { response, waits } = await politely(time, server.url, { method: 'POST' }, { idempotencyKey: 'pay-1' })
    expect(response.status).toBe(200)
    expect(waits[0]).toBeGreaterThanOrEqual(7_500)
    expect(server.keys.slice(2)).toEqual(['pay-1', 'pay-1'])
  })

  it('waits for the X-RateLimit-Reset Unix time when a server sends no Retry-After', async () => {
    const time = new VirtualTime()
    time.now = 4_321
    const server = await limitedServer(time.clock, {
      algorithm: 'fixed-window',
      limit: 2,
      window: '10s',
      headers: 'legacy',
      onRejected: (_req, res) => {
        res.removeHeader('Retry-After')
        res.status(429).json({ error: 'rate limit exceeded' })
      },
    })
    await exhaust(server.url)
    const { response, events } = await politely(time, server.url, undefined, { jitter: 'none' })
    expect(response.status).toBe(200)
    expect(events.map((event) => [event.source, event.waitMs])).toEqual([['rate-limit-reset', 6_000]])
    expect(server.arrivals.at(-1)).toBe(10_321)
  })

  it('an abort during a Retry-After wait rejects at once with the abort reason', async () => {
    const time = new VirtualTime()
    const server = await limitedServer(time.clock, { algorithm: 'fixed-window', limit: 1, window: '30s' })
    await exhaust(server.url)
    const controller = new AbortController()
    const reason = new Error('shutting down')
    let sleeping = 0
    const failure = politeFetch(
      server.url,
      { signal: controller.signal },
      {
        sleep: () =>
          new Promise<void>(() => {
            sleeping++
          }),
        onRetry: () => queueMicrotask(() => controller.abort(reason)),
      },
    )
    await expect(failure).rejects.toBe(reason)
    expect(sleeping).toBe(1)
  })
})

describe('parseRateLimitHeaders on @sluice/express responses', () => {
  // The client reports the format under the name the server's `headers` option gives the mode: one name for both.
  const modes = ['ietf', 'draft-7', 'draft-6', 'legacy'] as const
  it.each(modes)("reads the '%s' headers and reports them as format '%s'", async (mode) => {
    const time = new VirtualTime()
    time.now = 3_000
    const server = await limitedServer(time.clock, {
      algorithm: 'fixed-window',
      limit: 5,
      window: '10s',
      headers: mode,
    })
    const res = await fetch(server.url)
    const info = parseRateLimitHeaders(res.headers, { now: () => EPOCH + time.now })
    expect(info).toMatchObject({ format: mode, limit: 5, remaining: 4, resetMs: 7_000 })
    if (mode !== 'legacy') expect(info?.windowMs).toBe(10_000)
  })

  it('reads stacked rules and binds the one with the fewest remaining', async () => {
    const time = new VirtualTime()
    const server = await limitedServer(time.clock, {
      rules: [
        { name: 'user', algorithm: 'fixed-window', limit: 5, window: '10s' },
        { name: 'global', algorithm: 'fixed-window', limit: 3, window: '1m' },
      ],
    })
    const res = await fetch(server.url)
    const info = parseRateLimitHeaders(res.headers)
    expect(info?.quotas.map((quota) => [quota.name, quota.limit, quota.remaining, quota.windowMs])).toEqual([
      ['user', 5, 4, 10_000],
      ['global', 3, 2, 60_000],
    ])
    expect(info?.name).toBe('global')
  })
})
