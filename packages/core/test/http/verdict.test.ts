// What a rejected request is answered through the policy and an adapter's writer: status, headers, the JSON body
// and its text, and which rejections a custom onRejected answers.
import { EventEmitter } from 'node:events'
import { MemoryStore } from '../../src'
import type { LimitVerdict } from '../../src/http/verdict'
import { createHttpPolicy, type HttpAdapter, writeVerdict } from '../../src/internal-index'

interface Res {
  raw: EventEmitter
}

const adapter: HttpAdapter<Res> = { ownOptions: [], rawResponse: (res) => res.raw }
const facts = { ip: '192.0.2.1', method: 'POST', path: '/upload', headers: {}, trustsProxy: () => false }

async function verdicts(cost: number, count: number): Promise<LimitVerdict[]> {
  const store = new MemoryStore({ clock: () => 0 })
  const policy = createHttpPolicy<object, Res>(
    { algorithm: 'fixed-window', limit: 3, window: '10s', cost, store, clock: () => 0, headers: 'draft-6' },
    adapter,
  )
  const answered: LimitVerdict[] = []
  for (let i = 0; i < count; i++) answered.push(await policy.handle({}, { raw: new EventEmitter() }, facts))
  return answered
}

/** What an adapter writes for a verdict, with or without a custom onRejected. */
function written(verdict: LimitVerdict, custom: boolean): string[] {
  const calls: string[] = []
  writeVerdict(verdict, {
    next: () => calls.push('next'),
    decision: () => {},
    header: () => {},
    rejected: custom ? () => calls.push('custom onRejected') : undefined,
    send: (status, _body, json) => calls.push(`${status} ${json}`),
  })
  return calls
}

describe('a request over its limit', () => {
  it('is answered 429 with Retry-After, no-store and a JSON body whose text matches it', async () => {
    const rejected = (await verdicts(1, 4))[3] as LimitVerdict
    if (rejected.action !== 'reject') throw new Error(`expected a rejection, got ${rejected.action}`)
    expect(rejected).toMatchObject({ status: 429, reason: 'rate-limited' })
    expect(rejected.headers).toEqual([
      ['RateLimit-Policy', '3;w=10'],
      ['RateLimit-Limit', '3'],
      ['RateLimit-Remaining', '0'],
      ['RateLimit-Reset', '10'],
      ['Retry-After', '10'],
      ['Cache-Control', 'no-store'],
    ])
    expect(rejected.body).toEqual({ error: 'rate limit exceeded', retryAfter: 10 })
    expect(JSON.parse(rejected.json)).toEqual(rejected.body)
    expect(written(rejected, false)).toEqual(['429 {"error":"rate limit exceeded","retryAfter":10}'])
    expect(written(rejected, true)).toEqual(['custom onRejected'])
  })
})

describe('a request whose cost can never fit the limit', () => {
  it('is answered 413 with the cost and the limit, no-store and no Retry-After, whatever onRejected says', async () => {
    const [tooBig] = await verdicts(4, 1)
    if (tooBig?.action !== 'reject') throw new Error(`expected a rejection, got ${tooBig?.action}`)
    expect(tooBig).toMatchObject({ status: 413, reason: 'cost-exceeds-capacity' })
    expect(tooBig.body).toEqual({ error: 'request cost exceeds the rate limit', cost: 4, limit: 3 })
    expect(JSON.parse(tooBig.json)).toEqual(tooBig.body)
    expect(tooBig.headers).toContainEqual(['Cache-Control', 'no-store'])
    expect(tooBig.headers.map(([name]) => name)).not.toContain('Retry-After')
    const answer = '413 {"error":"request cost exceeds the rate limit","cost":4,"limit":3}'
    expect(written(tooBig, true)).toEqual([answer])
    expect(written(tooBig, false)).toEqual([answer])
  })
})
