// The fetch adapters without any server: Hono's app.request() and plain Request objects, as an edge runtime, a
// Worker or a test would call them.
import { InvalidOptionError, MemoryStore } from '@sluice/core'
import { decisionOf, rateLimit } from '@sluice/fetch'
import { rateLimit as honoRateLimit } from '@sluice/fetch/hono'
import { Hono } from 'hono'
import { freezeDate } from '../../../scripts/frozen-date'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

const quiet = () => {
  const warnings: string[] = []
  return { warnings, logger: { warn: (m: string) => warnings.push(m), error: () => {} } }
}
/** Deno's handler info, as Deno.serve passes it beside the request. */
const denoInfo = (hostname: string) => ({ remoteAddr: { hostname, port: 4242, transport: 'tcp' } })
/** Bun's server, as Bun.serve passes it beside the request. */
const bunServer = (address: string) => ({ requestIP: () => ({ address, family: 'IPv4', port: 4242 }) })

describe('Hono, through app.request()', () => {
  it('admits the limit, then 429 with Retry-After, no-store and the IETF fields; the decision is c.get("rateLimit")', async () => {
    const app = new Hono()
    app.use(honoRateLimit({ limit: 2, window: '1m', ip: (c) => c.req.header('x-test-client') }))
    app.get('/', (c) => c.json({ remaining: c.get('rateLimit')?.remaining }))
    const send = () => app.request('/', { headers: { 'x-test-client': '192.0.2.7' } })
    const first = await send()
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ remaining: 1 })
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60')
    expect(first.headers.get('ratelimit')).toMatch(/^"default";r=1;t=\d+$/)
    expect((await send()).status).toBe(200)
    const refused = await send()
    expect(refused.status).toBe(429)
    expect(refused.headers.get('cache-control')).toBe('no-store')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await refused.json()).toEqual({
      error: 'rate limit exceeded',
      retryAfter: Number(refused.headers.get('retry-after')),
    })
    // Another client has its own count.
    expect((await app.request('/', { headers: { 'x-test-client': '192.0.2.8' } })).status).toBe(200)
  })

  it('keys by the address Deno or Bun hand over beside the request, IPv6 per /64', async () => {
    for (const env of [denoInfo('2001:db8:1:2::1'), bunServer('2001:db8:1:2::1')]) {
      const app = new Hono()
      const limit = honoRateLimit({ limit: 1, window: '1m' })
      app.use(limit)
      app.get('/', async (c) => c.json({ keys: await limit.keyOf(c) }))
      const first = await app.request('/', {}, env)
      expect(await first.json()).toEqual({ keys: ['2001:db8:1:2::/64'] })
      const sameNetwork = denoInfo('2001:db8:1:2::ffff')
      const other = 'remoteAddr' in env ? sameNetwork : bunServer('2001:db8:1:2::ffff')
      expect((await app.request('/', {}, other)).status).toBe(429)
    }
  })

  it('a request without any address shares the key "unknown", with one warning naming the fix', async () => {
    const { warnings, logger } = quiet()
    const app = new Hono()
    app.use(honoRateLimit({ limit: 1, window: '1m', logger }))
    app.get('/', (c) => c.text('ok'))
    expect((await app.request('/')).status).toBe(200)
    expect((await app.request('/')).status).toBe(429)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/without a client address/)
  })

  it("a handler's error answered by Hono's error handler still carries the headers, and refund sees its 500", async () => {
    const app = new Hono()
    const store = new MemoryStore()
    const limit = honoRateLimit({
      limit: 1,
      window: '1m',
      store,
      ip: () => '192.0.2.1',
      refund: (_c, o) => o.status >= 500,
    })
    app.use(limit)
    app.get('/', () => {
      throw new Error('boom')
    })
    app.onError((_error, c) => c.text('failed', 500))
    for (let i = 0; i < 3; i++) {
      const res = await app.request('/')
      expect(res.status).toBe(500)
      expect(res.headers.get('ratelimit')).toMatch(/^"default";r=0;/)
      await res.text()
      await new Promise((resolve) => setImmediate(resolve))
      // Refunded: the next one is admitted again.
      expect((await limit.peek('192.0.2.1')).remaining).toBe(1)
    }
  })
})

describe('a plain fetch handler', () => {
  it('wraps a handler: the decision is decisionOf(request), the headers are on its response', async () => {
    const limit = rateLimit({ limit: 2, window: '1m' })
    const handler = limit((request) => Response.json({ remaining: decisionOf(request)?.remaining }))
    const first = await handler(new Request('http://127.0.0.1/'), denoInfo('192.0.2.1'))
    expect(await first.json()).toEqual({ remaining: 1 })
    expect(first.headers.get('ratelimit')).toMatch(/^"default";r=1;t=\d+$/)
    await handler(new Request('http://127.0.0.1/'), denoInfo('192.0.2.1'))
    const refused = await handler(new Request('http://127.0.0.1/'), denoInfo('192.0.2.1'))
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({ error: 'rate limit exceeded' })
  })

  it('adds its headers to a response whose headers are immutable (a redirect, or a fetched response)', async () => {
    const limit = rateLimit({ limit: 5, window: '1m', ip: () => '192.0.2.1' })
    const res = await limit(() => Response.redirect('http://127.0.0.1/elsewhere', 302))(
      new Request('http://127.0.0.1/'),
    )
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('http://127.0.0.1/elsewhere')
    expect(res.headers.get('ratelimit')).toMatch(/^"default";r=4;/)
  })

  it("refund decides when the response's body has been read to its end, or given up on", async () => {
    const outcomes: number[] = []
    const limit = rateLimit({
      limit: 1,
      window: '1m',
      ip: () => '192.0.2.1',
      refund: (_request, outcome) => {
        outcomes.push(outcome.status)
        return true
      },
    })
    const handler = limit(() => new Response('x'.repeat(100_000), { status: 502 }))
    const res = await handler(new Request('http://127.0.0.1/'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(outcomes).toEqual([]) // not read yet: the response has not ended
    expect(await res.text()).toHaveLength(100_000)
    await new Promise((resolve) => setImmediate(resolve))
    expect(outcomes).toEqual([502])
    expect((await limit.peek('192.0.2.1')).remaining).toBe(1)
    // A reader that gives up ends it too.
    const cancelled = await handler(new Request('http://127.0.0.1/'))
    await cancelled.body?.cancel()
    await new Promise((resolve) => setImmediate(resolve))
    expect(outcomes).toEqual([502, 502])
  })

  it('a handler that throws: the error goes on, and refund sees a 500', async () => {
    const outcomes: number[] = []
    const limit = rateLimit({
      limit: 1,
      window: '1m',
      ip: () => '192.0.2.1',
      refund: (_request, outcome) => {
        outcomes.push(outcome.status)
        return false
      },
    })
    await expect(limit(() => Promise.reject(new Error('boom')))(new Request('http://127.0.0.1/'))).rejects.toThrow(
      'boom',
    )
    await new Promise((resolve) => setImmediate(resolve))
    expect(outcomes).toEqual([500])
  })

  it("a custom onRejected's response gets the RateLimit, Retry-After and Cache-Control headers", async () => {
    const limit = rateLimit({
      limit: 1,
      window: '1m',
      ip: () => '192.0.2.1',
      onRejected: (_request, decision) => new Response(`slow down, ${decision.retryAfterMs} ms`, { status: 429 }),
    })
    const handler = limit(() => new Response('ok'))
    await handler(new Request('http://127.0.0.1/'))
    const refused = await handler(new Request('http://127.0.0.1/'))
    expect(await refused.text()).toMatch(/^slow down, \d+ ms$/)
    expect(refused.headers.get('cache-control')).toBe('no-store')
    expect(refused.headers.get('retry-after')).not.toBeNull()
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;/)
  })

  it('invalid options throw at construction, naming the option', () => {
    expect(() => rateLimit({ limit: 1, window: '1m', ip: 'x-real-ip' as never })).toThrow(InvalidOptionError)
    expect(() => rateLimit({ limit: 1, window: '1m', ip: 'x-real-ip' as never })).toThrow(/"?ip"?/)
    expect(() => honoRateLimit({ limit: 1, window: '1m', max: 5 } as never)).toThrow(/max/)
  })
})
