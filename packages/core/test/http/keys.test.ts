// The key and cost of a request: the client IP by default, never a spoofable X-Forwarded-For the framework does not
// trust (one warning that says so), and key and cost functions that may answer asynchronously.
import { EventEmitter } from 'node:events'
import { freezeDate } from '../../../../scripts/frozen-date'
import { type HttpLimitOptions, MemoryStore } from '../../src'
import { createHttpPolicy, type HttpAdapter, type RequestFacts } from '../../src/internal-index'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

interface Req {
  readonly user: string
}
interface Res {
  raw: EventEmitter
}

const adapter: HttpAdapter<Res> = { ownOptions: [], rawResponse: (res) => res.raw }

function facts(overrides: Partial<RequestFacts> = {}): RequestFacts {
  return { ip: '192.0.2.1', method: 'GET', path: '/', headers: {}, trustsProxy: () => false, ...overrides }
}

function setup(options: HttpLimitOptions<Req, Res> = { limit: 3, window: '1m' }) {
  const warnings: string[] = []
  const logger = { warn: (m: string) => warnings.push(m), error() {} }
  const policy = createHttpPolicy<Req, Res>({ store: new MemoryStore({ clock: () => 0 }), logger, ...options }, adapter)
  const send = (user: string, requestFacts = facts()) =>
    policy.handle({ user }, { raw: new EventEmitter() }, requestFacts)
  return { policy, warnings, send }
}

describe('the client IP key', () => {
  it('keys by the connection address and ignores an untrusted X-Forwarded-For, with one warning naming the request', async () => {
    const { warnings, send } = setup()
    const spoofed = (forwarded: string) =>
      facts({ method: 'POST', path: '/login', headers: { 'x-forwarded-for': forwarded } })
    await send('a', spoofed('203.0.113.1'))
    await send('a', spoofed('203.0.113.2'))
    expect(await send('a', spoofed('203.0.113.3'))).toMatchObject({ action: 'pass', decision: { remaining: 0 } })
    expect(warnings).toEqual([
      'sluice: POST /login came with X-Forwarded-For, but the framework does not trust the proxy, so it is keyed by ' +
        "the connection's address (192.0.2.1). Behind a proxy, enable trust proxy.",
    ])
  })

  it('does not warn about requests without X-Forwarded-For, nor ask the framework whether it trusts a proxy', async () => {
    const { warnings, send } = setup()
    let asked = 0
    const plain = facts({
      trustsProxy: () => {
        asked++
        return false
      },
    })
    for (let i = 0; i < 3; i++) await send('a', plain)
    expect([warnings, asked]).toEqual([[], 0])
  })
})

describe('key and cost functions', () => {
  it.each<[string, HttpLimitOptions<Req, Res>]>([
    ['a key function', { limit: 3, window: '1m', key: (r) => r.user }],
    ['an async key function', { limit: 3, window: '1m', key: async (r) => r.user }],
    [
      'a rule with an async key beside the IP rule',
      {
        rules: [
          { name: 'ip', limit: 100, window: '1m' },
          { name: 'user', limit: 3, window: '1m', key: async (r) => r.user },
        ],
      },
    ],
  ])('%s keeps each user to their own limit', async (_, options) => {
    const { send } = setup(options)
    for (let i = 0; i < 3; i++) await send('alice')
    expect(await send('alice')).toMatchObject({ action: 'reject', reason: 'rate-limited' })
    expect(await send('bob')).toMatchObject({ action: 'pass', decision: { remaining: 2 } })
  })

  it.each<[string, HttpLimitOptions<Req, Res>]>([
    ['a cost function', { limit: 3, window: '1m', cost: () => 2 }],
    ['an async cost function', { limit: 3, window: '1m', cost: async () => 2 }],
  ])('%s counts what it answers', async (_, options) => {
    const { send } = setup(options)
    expect(await send('a')).toMatchObject({ action: 'pass', decision: { remaining: 1 } })
    expect(await send('a')).toMatchObject({ action: 'reject', reason: 'rate-limited' })
  })

  it('an async cost function that answers nonsense is an error naming the option', async () => {
    const { send } = setup({ limit: 3, window: '1m', cost: async () => 0 })
    await expect(send('a')).rejects.toThrow('sluice: option "cost" must return a positive whole number (got 0)')
  })
})
