// docs/http.md shows responses as they go over the wire. Each ```http block there follows a marker
// `<!-- response: <name> -->` naming one of the scenarios below, which produces that response over real HTTP
// (Express; the conformance suite shows Koa and Fastify answer alike), compared as http-blocks.ts says.
import { MemoryStore, type Store, StoreUnavailableError } from '@sluice/core'
import { concurrencyLimit, rateLimit, shedLoad } from '@sluice/express'
import express from 'express'
import supertest from 'supertest'
import { expectShown, httpExamples } from './http-blocks'

// 2026-01-01T00:00:42Z: 42 s into a minute, so a one-minute fixed window resets in 18 s.
const NOW = 1_767_225_642_000
const clock = () => NOW
const frozen = () => new MemoryStore({ clock })
const quiet = { warn() {}, error() {} }

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

const documented = httpExamples('docs/http.md')

test('every scenario is shown in docs/http.md, and every example there names a scenario', () => {
  expect(documented.map((example) => example.name).sort()).toEqual(Object.keys(SCENARIOS).sort())
})

test.each(documented.map((example) => [example.name, example] as const))(
  'docs/http.md, %s: the response is the one shown',
  async (name, example) => {
    expectShown(example, await (SCENARIOS[name] as () => Promise<Response>)())
  },
)
