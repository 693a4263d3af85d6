// The options of an HTTP rate limiter as the adapters hand them to the core: each mistake is an InvalidOptionError
// at construction naming the option, and a rule's key function is named as that rule's option when it misbehaves.
import { EventEmitter } from 'node:events'
import { InvalidOptionError } from '../../src'
import { createHttpPolicy, type HttpAdapter, type RequestFacts } from '../../src/internal-index'

interface Req {
  readonly user?: unknown
}
interface Res {
  raw: EventEmitter
}

const adapter: HttpAdapter<Res> = { ownOptions: [], rawResponse: (res) => res.raw }
const QUIET = { warn() {}, error() {} }
const facts: RequestFacts = { ip: '192.0.2.1', method: 'GET', path: '/', headers: {}, trustsProxy: () => false }

function refusal(options: unknown): InvalidOptionError {
  try {
    createHttpPolicy<Req, Res>(options as never, adapter)
  } catch (error) {
    if (error instanceof InvalidOptionError) return error
    throw new Error(`expected an InvalidOptionError, got ${String(error)}`)
  }
  throw new Error('expected an InvalidOptionError, got a policy')
}

describe('rateLimit options are refused by name', () => {
  it.each<[string, unknown, string, string]>([
    ['no options object', null, 'options', 'must be an object (got null)'],
    ['rules that are not an array', { rules: { limit: 1 } }, 'rules', 'must be a non-empty array of rules'],
    ['a rule that is null', { rules: [null] }, 'rules[0]', 'must be an object'],
    ['a rule that is a number', { rules: [{ name: 'a', limit: 1, window: '1m' }, 5] }, 'rules[1]', 'must be an object'],
    ['a rule that is a string', { rules: ['1m'] }, 'rules[0]', 'must be an object'],
    ['a clock that is not a function', { limit: 1, window: '1m', clock: 1 }, 'clock', 'must be a function'],
    ['a misspelt option', { limit: 1, window: '1m', limt: 2 }, 'limt', 'is not an option of rateLimit'],
  ])('%s', (_, options, option, gist) => {
    const error = refusal(options)
    expect(error.option).toBe(option)
    expect(error.message).toContain(`option "${option}" ${gist}`)
  })

  it('an unknown option gets a hint only when another library calls it so', () => {
    expect(refusal({ limit: 1, window: '1m', limt: 2 }).message).toBe(
      'sluice: option "limt" is not an option of rateLimit',
    )
    expect(refusal({ limit: 1, window: '1m', max: 2 }).message).toContain('(use `limit`)')
  })

  it.each([399, 600, 200, 429.5])('statusCode %p is no HTTP error status', (statusCode) => {
    const error = refusal({ limit: 1, window: '1m', statusCode })
    expect(error.option).toBe('statusCode')
    expect(error.message).toContain(`must be an HTTP error status from 400 to 599 (got ${statusCode})`)
  })

  it.each([400, 429, 503, 599])('statusCode %p is answered to a rejected request', async (statusCode) => {
    const policy = createHttpPolicy<Req, Res>({ limit: 1, window: '1m', statusCode, logger: QUIET }, adapter)
    await policy.handle({}, { raw: new EventEmitter() }, facts)
    const verdict = await policy.handle({}, { raw: new EventEmitter() }, facts)
    expect(verdict.action === 'reject' && verdict.status).toBe(statusCode)
  })
})

describe("a key function's wrong answer names the option it came from", () => {
  const send = (options: object) =>
    createHttpPolicy<Req, Res>({ logger: QUIET, ...options } as never, adapter).handle(
      { user: 7 },
      { raw: new EventEmitter() },
      facts,
    )
  const badKey = (r: Req) => r.user as string

  it("a rule's own key is rules[i].key", async () => {
    const rules = [
      { name: 'ip', limit: 5, window: '1m' },
      { name: 'user', limit: 5, window: '1m', key: badKey },
    ]
    await expect(send({ rules })).rejects.toThrow('sluice: option "rules[1].key" must return a string (got 7)')
  })

  it('a rule without a key of its own uses the top-level key, and names it', async () => {
    const rules = [
      { name: 'user', limit: 5, window: '1m' },
      { name: 'ip', limit: 5, window: '1m', key: () => 'ip' },
    ]
    await expect(send({ key: badKey, rules })).rejects.toThrow('sluice: option "key" must return a string (got 7)')
  })
})
