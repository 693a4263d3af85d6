// docs/quotas.md, run: the apps of examples/docs/quotas.ts (the code the doc quotes) on a memory store whose clock
// the test moves. The worked quota goes number for number: 500,000 a Berlin day at a steady 10 requests a second, the
// remaining quota on the way (the doc's table), and the responses at the moment it runs out and after midnight over
// real HTTP (the doc's ```http blocks, compared as http-blocks.ts says). The 403 of the deny list, the lockout's
// decreasing Retry-After and a plan upgrade that keeps its usage go over HTTP too.
import { createLimiter, type Decision, MemoryStore } from '@sluice/core'
import fastify from 'fastify'
import supertest from 'supertest'
import { fastifyLogin, handleRoutes, listsApp, loginApp, plansApp, quotaApp } from '../../examples/docs/quotas'
import { expectShown, type HttpResponse, httpExamples } from './http-blocks'
import { read } from './markdown'

const DOC = 'docs/quotas.md'
const SECOND_MS = 1000
const HOUR_MS = 3_600_000

// Tuesday 2 June 2026, 00:00 in Berlin (CEST, UTC+2), and the next midnight: a day of 24 hours.
const MIDNIGHT = Date.parse('2026-06-01T22:00:00Z')
const NEXT_MIDNIGHT = Date.parse('2026-06-02T22:00:00Z')

function clocked(start: number) {
  const time = { now: start }
  return { time, store: new MemoryStore({ clock: () => time.now }) }
}

/** The rows of the table that follows `<!-- table: name -->` in the doc, as cells without their Markdown. */
function table(name: string): string[][] {
  const lines = read(DOC).split('\n')
  const start = lines.findIndex((line) => line.trim() === `<!-- table: ${name} -->`)
  if (start === -1) throw new Error(`${DOC} has no <!-- table: ${name} -->`)
  const rows: string[][] = []
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('|')) break
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim().replace(/\*\*|`/g, '')),
    )
  }
  return rows.slice(2) // the header and its rule
}

/** The number a cell starts with: `36,000`, `23 h`, `672 h (28 days)`. */
const number = (cell: string) => Number(/^[\d,]+/.exec(cell)?.[0].replace(/,/g, ''))

const shown = new Map(httpExamples(DOC).map((example) => [example.name, example]))
const seen = new Map<string, HttpResponse>()

function expectDoc(name: string, response: HttpResponse): void {
  const example = shown.get(name)
  if (example === undefined) throw new Error(`${DOC} shows no response "${name}"`)
  seen.set(name, response)
  expectShown(example, response)
}

afterAll(() => {
  // Every response the doc shows was produced here.
  expect([...shown.keys()].filter((name) => !seen.has(name))).toEqual([])
})

test('the worked quota: 500,000 a day at 10 a second runs out after 50,000 s; Retry-After points at midnight in Berlin', async () => {
  const { time, store } = clocked(MIDNIGHT)
  const { app, api } = quotaApp(store)
  const agent = supertest(app)
  const request = () => agent.get('/api/items').set('x-api-key', 'key-42')

  // The first 499,999 requests, one every 100 ms, through the middleware's own limiter (the same counts as over
  // HTTP; half a million HTTP requests would take minutes). The hourly remaining is checked against the doc's table.
  const hourly = new Map<number, number>()
  const wrong: number[] = []
  let i = 0
  for (; i < 499_999; i++) {
    time.now = MIDNIGHT + i * 100
    const decision = await api.limiter.consume('key-42')
    const daily = decision.rules?.[1] as Decision
    if (!decision.allowed || daily.remaining !== 500_000 - (i + 1)) wrong.push(i)
    if ((i + 1) % 36_000 === 0) hourly.set((i + 1) / 36_000, daily.remaining)
  }
  expect(wrong).toEqual([])
  const rows = table('worked-quota')
  expect(rows.length).toBeGreaterThan(3)
  for (const [hour, requests, remaining] of rows) {
    const h = number(hour as string)
    expect([hour, number(requests as string), hourly.get(h)]).toEqual([hour, h * 36_000, number(remaining as string)])
  }

  // The 500,000th, over HTTP, takes the last of the quota.
  time.now = MIDNIGHT + i * 100
  expectDoc('last-admitted', await request())
  // The 500,001st, at 50,000 s exactly: 13:53:20 in Berlin.
  time.now = MIDNIGHT + ++i * 100
  expect(time.now - MIDNIGHT).toBe(50_000 * SECOND_MS)
  expect(new Date(time.now).toISOString()).toBe('2026-06-02T11:53:20.000Z')
  const refused = await request()
  expectDoc('quota-exhausted', refused)
  expect(Number(refused.headers['retry-after']) * SECOND_MS).toBe(NEXT_MIDNIGHT - time.now)
  // Refused until the day's last second; the first request of the next day gets a fresh quota.
  time.now = NEXT_MIDNIGHT - 1
  expect((await request()).status).toBe(429)
  time.now = NEXT_MIDNIGHT
  expectDoc('next-day', await request())
}, 120_000)

test('calendar edges: the Berlin and New York days around daylight saving time, and months of 28 to 31 days', async () => {
  const rows = table('period-lengths')
  expect(rows.length).toBeGreaterThan(3)
  for (const [zone, period, , starts, hours] of rows) {
    const { time, store } = clocked(Date.parse(starts as string))
    const limiter = createLimiter({
      limit: 1,
      period: period as 'day' | 'month',
      timeZone: zone as string,
      store,
    })
    time.now += 1
    await limiter.consume('k')
    const refused = await limiter.consume('k')
    // The period that started at `starts` lasts `hours` (so the wait after its first millisecond is that, less 1 ms).
    expect([zone, period, starts, refused.retryAfterMs + 1]).toEqual([
      zone,
      period,
      starts,
      number(hours as string) * HOUR_MS,
    ])
  }
})

test('the 403 of the deny list: no-store, a JSON body, no rate-limit headers; the allow list is never counted', async () => {
  const { store } = clocked(MIDNIGHT)
  const revoked = new Set(['leaked-key'])
  const app = listsApp(store, async (key) => revoked.has(key))
  const from = (address: string) => supertest(app).get('/items').set('x-forwarded-for', address)
  expectDoc('denied', await from('203.0.113.9'))
  expect((await from('2001:db8:bad:7::1')).status).toBe(403)
  expect((await supertest(app).get('/partner/x').set('x-api-key', 'leaked-key')).status).toBe(403)
  for (let n = 0; n < 150; n++) {
    const internal = await from('10.1.2.3')
    expect([internal.status, internal.headers['ratelimit']]).toEqual([200, undefined])
  }
  expect((await from('198.51.100.7')).headers['ratelimit']).toBe('"default";r=99;t=61')
})

test('the lockout: 5 failed logins, then 15 minutes refused with a decreasing Retry-After; a success resets', async () => {
  const { time, store } = clocked(MIDNIGHT)
  let right = false
  const app = loginApp(store, async () => right)
  const login = () => supertest(app).post('/login')
  for (let n = 0; n < 5; n++) expect((await login()).status).toBe(401)
  // The sixth failure is refused: it starts the block.
  time.now = MIDNIGHT + 60_000
  expectDoc('locked-out', await login())
  right = true
  const waits: string[] = []
  for (const minutes of [2, 6, 11, 15]) {
    time.now = MIDNIGHT + minutes * 60_000
    const response = await login()
    waits.push(`${response.status} ${response.headers['retry-after']}`)
  }
  expect(waits).toEqual(['429 840', '429 600', '429 300', '429 60'])
  time.now = MIDNIGHT + 16 * 60_000
  expect((await login()).status).toBe(200)
  // After a success the failures are forgotten: four more typos and the right password still gets in.
  right = false
  for (let n = 0; n < 4; n++) expect((await login()).status).toBe(401)
  right = true
  expect((await login()).status).toBe(200)
  right = false
  for (let n = 0; n < 5; n++) expect((await login()).status).toBe(401)
})

test('the lockout on Fastify: the decorator resets the route limit after a success', async () => {
  const app = fastify()
  let right = false
  await fastifyLogin(app, async () => right)
  await app.listen({ port: 0, host: '127.0.0.1' })
  try {
    const login = async () => (await supertest(app.server).post('/login')).status
    for (let n = 0; n < 4; n++) expect(await login()).toBe(401)
    right = true
    expect(await login()).toBe(200)
    right = false
    for (let n = 0; n < 5; n++) expect(await login()).toBe(401)
    expect(await login()).toBe(429)
    right = true
    expect(await login()).toBe(429)
  } finally {
    await app.close()
  }
})

test('plans: free is 10 a minute, pro 1000; an upgrade mid-minute keeps what was used', async () => {
  const { store } = clocked(MIDNIGHT + 10 * SECOND_MS)
  const plans = new Map<string, 'free' | 'pro'>([['alice', 'free']])
  const app = plansApp(store, async (req) => plans.get(req.get('x-api-key') ?? '') ?? 'free')
  const as = (key: string) => supertest(app).get('/').set('x-api-key', key)
  for (let n = 0; n < 9; n++) expect((await as('alice')).status).toBe(200)
  plans.set('alice', 'pro')
  expectDoc('upgraded', await as('alice'))
  for (let n = 0; n < 10; n++) expect((await as('bob')).status).toBe(200)
  expect((await as('bob')).status).toBe(429)
})

test('the handle: peek shows what is left without charging it; reset starts a key again', async () => {
  const { time, store } = clocked(MIDNIGHT)
  const { app, api } = quotaApp(store)
  handleRoutes(app, api)
  const agent = supertest(app)
  for (let n = 0; n < 3; n++) await agent.get('/api/items').set('x-api-key', 'key-7')
  time.now = MIDNIGHT + 30 * SECOND_MS
  for (let n = 0; n < 2; n++) {
    expectDoc('peek', await agent.get('/quota').set('x-api-key', 'key-7'))
  }
  expect((await agent.delete('/support/quota/key-7')).status).toBe(204)
  const fresh = (await agent.get('/quota').set('x-api-key', 'key-7')).body as { remaining: number }[]
  expect(fresh.map((rule) => rule.remaining)).toEqual([1000, 500_000])
})
