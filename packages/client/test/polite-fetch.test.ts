import fc from 'fast-check'
import {
  ClientOptionError,
  createPoliteFetch,
  type PoliteFetchOptions,
  politeFetch,
  type RetryEvent,
  WaitTooLongError,
} from '../src'
import { reply, startServer, type TestServer } from './helpers/http-server'
import { seededRandom } from './helpers/random'

// Plain node:http servers on loopback that answer whatever a case needs. Waits go through an injected sleep that
// records them and returns at once, so every wait is observed exactly and no test waits on the wall clock.

function recorder(options: PoliteFetchOptions = {}) {
  const waits: number[] = []
  const events: RetryEvent[] = []
  const settings: PoliteFetchOptions = {
    sleep: async (ms) => {
      waits.push(ms)
    },
    onRetry: (event) => events.push(event),
    ...options,
  }
  return { waits, events, settings }
}

const servers: TestServer[] = []
async function server(handler: Parameters<typeof startServer>[0]) {
  const started = await startServer(handler)
  servers.push(started)
  return started
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

/** Refuses the first `refusals` requests with `status` and `headers`, then answers 200 "ok". */
function refuseThenServe(refusals: number, status: number, headers: () => Record<string, string> = () => ({})) {
  return server((_req, res, index) => {
    if (index < refusals) reply(res, status, headers(), `refused ${index + 1}`)
    else reply(res, 200, {}, 'ok')
  })
}

describe('politeFetch: Retry-After', () => {
  it('waits exactly the delay-seconds it is given, with jitter off', async () => {
    const { url, seen } = await refuseThenServe(2, 429, () => ({ 'retry-after': '3' }))
    const { waits, events, settings } = recorder({ jitter: 'none' })
    const res = await politeFetch(url, undefined, settings)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('ok')
    expect(seen).toHaveLength(3)
    expect(waits).toEqual([3000, 3000])
    expect(events.map((e) => [e.attempt, e.reason, e.source, e.response?.status])).toEqual([
      [1, 'status', 'retry-after', 429],
      [2, 'status', 'retry-after', 429],
    ])
  })

  it("waits until an HTTP-date, measured from the server's Date header", async () => {
    const serverTime = Date.UTC(2026, 10, 30, 1, 0, 0)
    const { url } = await refuseThenServe(1, 503, () => ({
      date: new Date(serverTime).toUTCString(),
      'retry-after': new Date(serverTime + 7000).toUTCString(),
    }))
    // The local clock is an hour off; the server's own Date header makes that irrelevant.
    const { waits, settings } = recorder({ jitter: 'none', now: () => serverTime + 3_600_000 })
    expect((await politeFetch(url, undefined, settings)).status).toBe(200)
    expect(waits).toEqual([7000])
  })

  it('without a Date header, measures the HTTP-date from the injected clock', async () => {
    const localTime = Date.UTC(2026, 10, 30, 1, 0, 0)
    const { url } = await server((_req, res, index) => {
      res.sendDate = false
      if (index === 0) reply(res, 429, { 'retry-after': new Date(localTime + 12_000).toUTCString() })
      else reply(res, 200)
    })
    const { waits, settings } = recorder({ jitter: 'none', now: () => localTime })
    await politeFetch(url, undefined, settings)
    expect(waits).toEqual([12_000])
  })

  it('never waits less than Retry-After says, in either form, whatever the jitter draws', async () => {
    const serverTime = Date.UTC(2026, 10, 30, 2, 0, 0)
    const { url } = await server((req, res) => {
      const [form, seconds] = (req.url ?? '').slice(1).split('/')
      const value = form === 'date' ? new Date(serverTime + Number(seconds) * 1000).toUTCString() : String(seconds)
      reply(res, 429, { 'retry-after': value, date: new Date(serverTime).toUTCString() })
    })
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('seconds', 'date'),
        fc.integer({ min: 0, max: 59 }),
        fc.integer(),
        async (form, seconds, seed) => {
          const { waits, settings } = recorder({ random: seededRandom(seed), maxAttempts: 4 })
          const res = await politeFetch(`${url}/${form}/${seconds}`, undefined, settings)
          expect(res.status).toBe(429)
          expect(waits).toHaveLength(3)
          waits.forEach((wait, i) => {
            expect(wait).toBeGreaterThanOrEqual(seconds * 1000)
            // Full jitter adds at most retry n's backoff bound on top, so a crowd does not come back together.
            expect(wait).toBeLessThanOrEqual(seconds * 1000 + Math.min(10_000, 500 * 2 ** i))
          })
        },
      ),
      { numRuns: 60, seed: 42 },
    )
  })

  it('ignores a malformed Retry-After and backs off instead', async () => {
    const { url } = await refuseThenServe(1, 429, () => ({ 'retry-after': 'in a minute' }))
    const { waits, events, settings } = recorder({ jitter: 'none' })
    await politeFetch(url, undefined, settings)
    expect(waits).toEqual([500])
    expect(events[0]?.source).toBe('backoff')
  })

  it('waits for a rate-limit reset when nothing remains and there is no Retry-After (GitHub style)', async () => {
    const serverTime = Date.UTC(2026, 10, 30, 2, 0, 0)
    const { url } = await refuseThenServe(1, 429, () => ({
      date: new Date(serverTime).toUTCString(),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(serverTime / 1000 + 42),
    }))
    const { waits, events, settings } = recorder({ jitter: 'none' })
    await politeFetch(url, undefined, settings)
    expect(waits).toEqual([42_000])
    expect(events[0]?.source).toBe('rate-limit-reset')
  })
})

describe('politeFetch: maxWaitMs', () => {
  it('gives up at once on a Unix time sent as Retry-After seconds, with the response intact', async () => {
    const { url, seen } = await server((_req, res) =>
      reply(res, 429, { 'retry-after': '1764464400' }, '{"error":"rate limit exceeded"}'),
    )
    const { waits, settings } = recorder()
    const failure = politeFetch(url, undefined, settings)
    await expect(failure).rejects.toThrow(WaitTooLongError)
    const error = (await failure.catch((e: unknown) => e)) as WaitTooLongError
    expect(error.message).toMatch(/maxWaitMs/)
    expect(error).toMatchObject({ waitMs: 1_764_464_400_000, maxWaitMs: 60_000, source: 'retry-after' })
    expect(error.response.status).toBe(429)
    expect(await error.response.text()).toBe('{"error":"rate limit exceeded"}')
    expect(seen).toHaveLength(1)
    expect(waits).toEqual([])
  })

  it('gives up on a reset further away than maxWaitMs, and waits one that is within it', async () => {
    const { url } = await server((req, res) =>
      reply(res, 503, { 'ratelimit-remaining': '0', 'ratelimit-reset': (req.url ?? '/').slice(1) }),
    )
    const { settings } = recorder({ maxWaitMs: 30_000 })
    await expect(politeFetch(`${url}/31`, undefined, settings)).rejects.toMatchObject({
      name: 'WaitTooLongError',
      source: 'rate-limit-reset',
      waitMs: 31_000,
    })
    const { waits, settings: within } = recorder({ maxWaitMs: 30_000, maxAttempts: 2, jitter: 'none' })
    expect((await politeFetch(`${url}/30`, undefined, within)).status).toBe(503)
    expect(waits).toEqual([30_000])
  })
})

describe('politeFetch: long waits', () => {
  const DAY_MS = 24 * 3600 * 1000
  afterEach(() => jest.useRealTimers())

  /** A fetch that answers 429 with `retryAfter` once, then 200, and records when each call came. */
  function scripted(retryAfter: string) {
    const calls: number[] = []
    const fetch = async () => {
      calls.push(Date.now())
      return calls.length === 1
        ? new Response(null, { status: 429, headers: { 'retry-after': retryAfter } })
        : new Response('ok', { status: 200 })
    }
    return { calls, fetch }
  }

  it('with maxWaitMs: Infinity waits a 30-day Retry-After for 30 days (a timer past 2^31 - 1 ms fired after 1 ms)', async () => {
    jest.useFakeTimers({ now: 0 })
    const { calls, fetch } = scripted(String(30 * 24 * 3600))
    const response = politeFetch('http://127.0.0.1:9/', undefined, { fetch, maxWaitMs: Infinity, jitter: 'none' })
    await jest.advanceTimersByTimeAsync(29 * DAY_MS)
    expect(calls).toEqual([0])
    await jest.advanceTimersByTimeAsync(DAY_MS)
    expect((await response).status).toBe(200)
    expect(calls).toEqual([0, 30 * DAY_MS])
  })

  it('reads a Retry-After too long for a number as 2^31 s, as RFC 9111 reads an overflowing delta-seconds', async () => {
    const { fetch } = scripted('9'.repeat(400))
    const failure = politeFetch('http://127.0.0.1:9/', undefined, { fetch })
    await expect(failure).rejects.toMatchObject({ name: 'WaitTooLongError', waitMs: 2 ** 31 * 1000 })
  })
})

describe('politeFetch: backoff and attempts', () => {
  it('without Retry-After, retry n waits min(cap, base * 2^(n-1)) at most; the 6th retry is capped at 10 s', async () => {
    const { url } = await server((_req, res) => reply(res, 503))
    const { waits, events, settings } = recorder({ maxAttempts: 8, random: () => 0.999_999_9 })
    await politeFetch(url, undefined, settings)
    expect(events.map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(waits).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000])
  })

  it('draws each wait in [0, min(cap, base * 2^(n-1))] with a real generator', async () => {
    const { url } = await server((_req, res) => reply(res, 429))
    for (const seed of [1, 2, 3, 4, 5]) {
      const { waits, settings } = recorder({ maxAttempts: 10, random: seededRandom(seed) })
      await politeFetch(url, undefined, settings)
      expect(waits).toHaveLength(9)
      waits.forEach((wait, i) => {
        expect(wait).toBeGreaterThanOrEqual(0)
        expect(wait).toBeLessThanOrEqual(Math.min(10_000, 500 * 2 ** i))
      })
    }
  })

  it('honours base and cap', async () => {
    const { url } = await server((_req, res) => reply(res, 503))
    const { waits, settings } = recorder({ maxAttempts: 5, jitter: 'none', baseDelayMs: 100, maxDelayMs: 300 })
    await politeFetch(url, undefined, settings)
    expect(waits).toEqual([100, 200, 300, 300])
  })

  it('after maxAttempts (the first try counts) it stops and returns the last 429, body intact', async () => {
    const { url, seen } = await server((_req, res, index) =>
      reply(res, 429, { 'retry-after': '1' }, `refusal ${index + 1}`),
    )
    const { waits, settings } = recorder({ maxAttempts: 3 })
    const res = await politeFetch(url, undefined, settings)
    expect(res.status).toBe(429)
    expect(await res.text()).toBe('refusal 3')
    expect(seen).toHaveLength(3)
    expect(waits).toHaveLength(2)
  })

  it('makes 5 attempts by default', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 503))
    await politeFetch(url, undefined, recorder().settings)
    expect(seen).toHaveLength(5)
  })

  it('returns other statuses at once', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 500, {}, 'boom'))
    const res = await politeFetch(url, undefined, recorder().settings)
    expect([res.status, await res.text(), seen.length]).toEqual([500, 'boom', 1])
  })

  it('retries only the statuses in retryOn', async () => {
    const { url, seen } = await refuseThenServe(1, 502)
    expect((await politeFetch(url, undefined, recorder({ retryOn: [502] }).settings)).status).toBe(200)
    expect(seen).toHaveLength(2)
    expect((await politeFetch(url, undefined, recorder({ retryOn: [503] }).settings)).status).toBe(200)
  })
})

describe('politeFetch: which requests are retried', () => {
  it('does not retry a POST without an idempotency key', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 429, { 'retry-after': '1' }))
    const { waits, settings } = recorder()
    const res = await politeFetch(url, { method: 'POST', body: '{"amount":5}' }, settings)
    expect(res.status).toBe(429)
    expect(seen).toHaveLength(1)
    expect(seen[0]?.headers['idempotency-key']).toBeUndefined()
    expect(waits).toEqual([])
  })

  it.each(['POST', 'PATCH', 'PURGE'])(
    'tries a %s answered 429 without an Idempotency-Key once: it is not safe to repeat',
    async (method) => {
      const { url, seen } = await server((_req, res) => reply(res, 429, { 'retry-after': '1' }, 'refused'))
      const { waits, events, settings } = recorder()
      const res = await politeFetch(url, { method, body: 'change' }, settings)
      expect([res.status, await res.text()]).toEqual([429, 'refused'])
      expect(seen.map((r) => [r.method, r.headers['idempotency-key']])).toEqual([[method, undefined]])
      expect([waits, events]).toEqual([[], []])
    },
  )

  it('retries a PATCH answered 429 that carries an Idempotency-Key, with the same key and body', async () => {
    const { url, seen } = await refuseThenServe(2, 429, () => ({ 'retry-after': '1' }))
    const init = { method: 'PATCH', body: '{"qty":2}', headers: { 'Idempotency-Key': 'cart-9' } }
    const res = await politeFetch(url, init, recorder().settings)
    expect(res.status).toBe(200)
    expect(seen.map((r) => [r.method, r.headers['idempotency-key'], r.body])).toEqual(
      Array(3).fill(['PATCH', 'cart-9', '{"qty":2}']),
    )
  })

  it('with idempotencyKey: true, every retry of a POST carries the same generated key and the same body', async () => {
    const { url, seen } = await refuseThenServe(3, 429, () => ({ 'retry-after': '1' }))
    const res = await politeFetch(
      url,
      { method: 'POST', body: '{"amount":5}' },
      recorder({ idempotencyKey: true }).settings,
    )
    expect(res.status).toBe(200)
    expect(seen).toHaveLength(4)
    const keys = new Set(seen.map((r) => r.headers['idempotency-key']))
    expect(keys.size).toBe(1)
    expect([...keys][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(seen.map((r) => r.body)).toEqual(Array(4).fill('{"amount":5}'))
  })

  it('generates a new key for each call, not one per process', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 200))
    const { settings } = recorder({ idempotencyKey: true })
    await politeFetch(url, { method: 'POST' }, settings)
    await politeFetch(url, { method: 'POST' }, settings)
    expect(seen[0]?.headers['idempotency-key']).not.toBe(seen[1]?.headers['idempotency-key'])
  })

  it("keeps the caller's own Idempotency-Key header on every retry, and uses a key given as a string", async () => {
    const { url, seen } = await refuseThenServe(2, 503)
    await politeFetch(
      url,
      { method: 'PATCH', headers: { 'Idempotency-Key': 'order-17' } },
      recorder({ idempotencyKey: true }).settings,
    )
    expect(seen.map((r) => r.headers['idempotency-key'])).toEqual(['order-17', 'order-17', 'order-17'])
    expect(seen.map((r) => r.method)).toEqual(['PATCH', 'PATCH', 'PATCH'])

    const { url: url2, seen: seen2 } = await refuseThenServe(1, 503)
    await politeFetch(url2, { method: 'POST' }, recorder({ idempotencyKey: 'order-18' }).settings)
    expect(seen2.map((r) => r.headers['idempotency-key'])).toEqual(['order-18', 'order-18'])
  })

  it('retries idempotent methods without a key: PUT and DELETE', async () => {
    const { url, seen } = await refuseThenServe(2, 503)
    await politeFetch(url, { method: 'PUT', body: 'x' }, recorder().settings)
    await politeFetch(url, { method: 'DELETE' }, recorder().settings)
    expect(seen.map((r) => r.method)).toEqual(['PUT', 'PUT', 'PUT', 'DELETE'])
  })

  it('replays byte, Blob and form bodies, which fetch can send again', async () => {
    const { url, seen } = await server((_req, res, index) => reply(res, index % 2 === 0 ? 503 : 200))
    const bodies = [Buffer.from('bytes'), new Blob(['blob']), new URLSearchParams({ form: 'yes' })]
    for (const body of bodies) await politeFetch(url, { method: 'PUT', body }, recorder().settings)
    expect(seen.map((r) => r.body)).toEqual(['bytes', 'bytes', 'blob', 'blob', 'form=yes', 'form=yes'])
  })

  it('replays the body of a Request object on each retry', async () => {
    const { url, seen } = await refuseThenServe(2, 429)
    const request = new Request(url, { method: 'POST', body: 'payload', headers: { 'idempotency-key': 'k1' } })
    expect((await politeFetch(request, undefined, recorder().settings)).status).toBe(200)
    expect(seen.map((r) => [r.body, r.headers['idempotency-key']])).toEqual(Array(3).fill(['payload', 'k1']))
  })

  it('sends a stream body once and does not retry it, key or not', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 503))
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed'))
        controller.close()
      },
    })
    const init = { method: 'PUT', body, duplex: 'half' } as RequestInit
    const res = await politeFetch(url, init, recorder({ idempotencyKey: true }).settings)
    expect(res.status).toBe(503)
    expect(seen.map((r) => r.body)).toEqual(['streamed'])

    async function* chunks() {
      yield new TextEncoder().encode('iterated')
    }
    const iterable = { method: 'PUT', body: chunks(), duplex: 'half' } as unknown as RequestInit
    expect((await politeFetch(url, iterable, recorder().settings)).status).toBe(503)
    expect(seen.map((r) => r.body)).toEqual(['streamed', 'iterated'])
  })
})

describe('politeFetch: network errors', () => {
  async function closedPortUrl() {
    const closed = await startServer(() => undefined)
    await closed.close()
    return closed.url
  }

  it('retries a GET that meets a network error, then rethrows the TypeError', async () => {
    const url = await closedPortUrl()
    const { waits, events, settings } = recorder({ maxAttempts: 3, jitter: 'none' })
    await expect(politeFetch(url, undefined, settings)).rejects.toMatchObject({ name: 'TypeError' })
    expect(waits).toEqual([500, 1000])
    expect(events.map((e) => e.reason)).toEqual(['network-error', 'network-error'])
  })

  it('recovers when the network comes back', async () => {
    const { url } = await server((_req, res) => reply(res, 200, {}, 'back'))
    let calls = 0
    const flaky = (input: string | URL | Request, init?: RequestInit) =>
      ++calls === 1 ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init)
    const res = await politeFetch(url, undefined, recorder({ fetch: flaky }).settings)
    expect(await res.text()).toBe('back')
    expect(calls).toBe(2)
  })

  it('does not retry a network error on a POST without a key, nor when retryNetworkErrors is false', async () => {
    const url = await closedPortUrl()
    const first = recorder()
    await expect(politeFetch(url, { method: 'POST' }, first.settings)).rejects.toMatchObject({ name: 'TypeError' })
    const second = recorder({ retryNetworkErrors: false })
    await expect(politeFetch(url, undefined, second.settings)).rejects.toMatchObject({ name: 'TypeError' })
    expect([...first.waits, ...second.waits]).toEqual([])
  })
})

describe('politeFetch: abort', () => {
  it('an abort during a wait rejects at once with the abort reason', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 429, { 'retry-after': '50' }))
    const controller = new AbortController()
    const reason = new Error('user navigated away')
    let sleeping = false
    const failure = politeFetch(
      url,
      { signal: controller.signal },
      {
        // A sleep that would never end by itself: only the abort can end this wait.
        sleep: () =>
          new Promise<void>(() => {
            sleeping = true
          }),
        onRetry: () => queueMicrotask(() => controller.abort(reason)),
      },
    )
    await expect(failure).rejects.toBe(reason)
    expect(sleeping).toBe(true)
    expect(seen).toHaveLength(1)
  })

  it('the default timer sleep is stopped by the abort, with the DOMException reason', async () => {
    const { url } = await server((_req, res) => reply(res, 503, { 'retry-after': '59' }))
    const controller = new AbortController()
    const failure = politeFetch(url, { signal: controller.signal }, { onRetry: () => controller.abort() })
    await expect(failure).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('an abort while the request is in flight rejects with the reason and is not retried', async () => {
    const { url, seen } = await server(() => undefined)
    const controller = new AbortController()
    const reason = new Error('cancelled')
    const { waits, settings } = recorder()
    const failure = politeFetch(url, { signal: controller.signal }, settings)
    while (seen.length === 0) await new Promise((resolve) => setImmediate(resolve))
    controller.abort(reason)
    await expect(failure).rejects.toBe(reason)
    expect(waits).toEqual([])
  })

  it('an already aborted signal rejects before any request', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 200))
    const reason = new Error('too late')
    await expect(politeFetch(url, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
    expect(seen).toHaveLength(0)
  })
})

describe('politeFetch: options', () => {
  it.each([
    [{ maxAttempts: 0 }, 'maxAttempts'],
    [{ maxAttempts: 1.5 }, 'maxAttempts'],
    [{ baseDelayMs: -1 }, 'baseDelayMs'],
    [{ maxDelayMs: Number.POSITIVE_INFINITY }, 'maxDelayMs'],
    [{ maxDelayMs: Number.NaN }, 'maxDelayMs'],
    [{ maxWaitMs: -5 }, 'maxWaitMs'],
    [{ jitter: 'equal' }, 'jitter'],
    [{ retryOn: [429, 'x'] }, 'retryOn'],
    [{ idempotencyKey: '' }, 'idempotencyKey'],
    [{ idempotencyKey: 'two words' }, 'idempotencyKey'],
    [{ random: 0.5 }, 'random'],
    [{ sleep: 100 }, 'sleep'],
    [{ fetch: 'fetch' }, 'fetch'],
  ])('rejects %j with a ClientOptionError naming %s', async (options, option) => {
    const failure = politeFetch('http://127.0.0.1:9/', undefined, options as PoliteFetchOptions)
    await expect(failure).rejects.toThrow(ClientOptionError)
    await expect(failure).rejects.toMatchObject({ option, message: expect.stringContaining(`"${option}"`) })
  })

  it('createPoliteFetch checks its defaults at once and lets a call override them', async () => {
    expect(() => createPoliteFetch({ maxAttempts: -1 })).toThrow(ClientOptionError)
    const { url, seen } = await server((_req, res) => reply(res, 503))
    const { settings } = recorder()
    const fetchPolitely = createPoliteFetch({ ...settings, maxAttempts: 2 })
    await fetchPolitely(url)
    expect(seen).toHaveLength(2)
    await fetchPolitely(url, undefined, { maxAttempts: 3 })
    expect(seen).toHaveLength(5)
  })
})
