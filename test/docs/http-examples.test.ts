// docs/http.md shows responses as they go over the wire. Each ```http block there follows a marker
// `<!-- response: <name> -->` naming one of the scenarios below, which produces that response over real HTTP
// (Express; the conformance suite shows Koa and Fastify answer alike). The block's status line, every header it
// lists and its JSON body must be what the scenario gets, and the rate-limit headers it leaves out must be absent.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MemoryStore, type Store, StoreUnavailableError } from '@sluice/core'
import { concurrencyLimit, rateLimit, shedLoad } from '@sluice/express'
import express from 'express'
import supertest from 'supertest'

const DOC = join(__dirname, '../../docs/http.md')

// 2026-01-01T00:00:42Z: 42 s into a minute, so a one-minute fixed window resets in 18 s.
const NOW = 1_767_225_642_000
const clock = () => NOW
const frozen = () => new MemoryStore({ clock })
const quiet = { warn() {}, error() {} }

/** The headers a rate-limit response may carry: every one the doc leaves out of a block must be absent. */
const WATCHED = [
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'cache-control',
]

type Response = supertest.Response

/** 100 a minute in fixed windows, as most examples of the doc have it. */
const FIXED = { algorithm: 'fixed-window', limit: 100, window: '1m' } as const

/** The response to a client's request at 00:00:42, after `before` requests of its own in this minute. */
async function nthRequest(options: Parameters<typeof rateLimit>[0], before: number): Promise<Response> {
  const app = express()
  app.use(rateLimit({ store: frozen(), clock, ...options }))
  app.get('/', (_req, res) => {
    res.send('ok')
  })
  const agent = supertest.agent(app)
  for (let i = 0; i < before; i++) await agent.get('/')
  return agent.get('/')
}

/** A store that cannot decide, as RedisStore is under `onError: 'closed'` while Redis is away. */
const unavailable: Store = {
  bind: (rules) => ({
    rules,
    apply: () => Promise.reject(new StoreUnavailableError('sluice: Redis is unavailable (connection refused)')),
    refund: () => Promise.resolve(),
    reset: () => Promise.resolve(),
  }),
}

/** The response a second request gets while a first one holds the only slot that `protect` leaves. */
async function whileBusy(protect: express.RequestHandler): Promise<Response> {
  const app = express()
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let started = () => {}
  const running = new Promise<void>((resolve) => {
    started = resolve
  })
  app.use(protect)
  app.get('/', async (_req, res) => {
    started()
    await held
    res.send('ok')
  })
  const server = app.listen(0, '127.0.0.1')
  try {
    const first = supertest(server)
      .get('/')
      .then((response) => response)
    await running
    const second = await supertest(server).get('/')
    release()
    await first
    return second
  } finally {
    server.close()
  }
}

const SCENARIOS: Record<string, () => Promise<Response>> = {
  ietf: () => nthRequest(FIXED, 57),
  'draft-7': () => nthRequest({ ...FIXED, headers: 'draft-7' }, 57),
  'draft-6': () => nthRequest({ ...FIXED, headers: 'draft-6' }, 57),
  legacy: () => nthRequest({ ...FIXED, headers: 'legacy' }, 57),
  'ietf-and-legacy': () => nthRequest({ ...FIXED, headers: ['ietf', 'legacy'] }, 57),
  rejected: () => nthRequest(FIXED, 100),
  stacked: () =>
    nthRequest(
      {
        algorithm: 'fixed-window',
        rules: [
          { name: 'user', limit: 100, window: '1m' },
          { name: 'tenant', limit: 2000, window: '1m', key: () => 'tenant:acme' },
        ],
      },
      57,
    ),
  'cost-exceeds-capacity': () => nthRequest({ ...FIXED, limit: 30, cost: 40 }, 0),
  'store-unavailable': () => nthRequest({ ...FIXED, store: unavailable, logger: quiet }, 0),
  overloaded: () => whileBusy(shedLoad({ maxInFlight: 1, queue: 0 })),
  'too-many-in-flight': () => whileBusy(concurrencyLimit({ limit: 1 })),
}

interface Example {
  readonly name: string
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: unknown
}

/** Every ```http block of the doc, with the scenario named by the marker before it. */
function examples(): Example[] {
  const lines = readFileSync(DOC, 'utf8').split('\n')
  const found: Example[] = []
  lines.forEach((line, i) => {
    if (line.trim() !== '```http') return
    const marker = /^<!-- response: ([\w-]+) -->$/.exec(lines[i - 1]?.trim() ?? '')
    if (marker === null)
      throw new Error(`docs/http.md:${i + 1}: an http block without a <!-- response: name --> marker`)
    const end = lines.indexOf('```', i + 1)
    const block = lines.slice(i + 1, end)
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(block[0] ?? '')
    if (status === null) throw new Error(`docs/http.md:${i + 2}: a block starts with its status line`)
    const blank = block.indexOf('')
    const headerLines = block.slice(1, blank === -1 ? undefined : blank)
    const headers = new Map(
      headerLines.map((header) => {
        const colon = header.indexOf(': ')
        return [header.slice(0, colon).toLowerCase(), header.slice(colon + 2)] as const
      }),
    )
    const body = blank === -1 ? undefined : JSON.parse(block.slice(blank + 1).join('\n'))
    found.push({ name: marker[1] as string, status: Number(status[1]), headers, body })
  })
  return found
}

const documented = examples()

test('every scenario is shown in docs/http.md, and every example there names a scenario', () => {
  expect(documented.map((example) => example.name).sort()).toEqual(Object.keys(SCENARIOS).sort())
})

test.each(documented.map((example) => [example.name, example] as const))(
  'docs/http.md, %s: the response is the one shown',
  async (name, example) => {
    const response = await (SCENARIOS[name] as () => Promise<Response>)()
    expect(response.status).toBe(example.status)
    for (const [header, value] of example.headers) expect([header, response.headers[header]]).toEqual([header, value])
    for (const header of WATCHED) {
      if (!example.headers.has(header)) expect([header, response.headers[header]]).toEqual([header, undefined])
    }
    if (example.body !== undefined) expect(response.body).toEqual(example.body)
  },
)
