// Per-request policy at the HTTP layer, below the adapters: limit and window functions, allow and deny lists, and the
// handle, with their errors (a clear error where the bad value arrives, never a wrong decision).
import { EventEmitter } from 'node:events'
import { freezeDate } from '../../../../scripts/frozen-date'
import { type HttpLimitOptions, InvalidOptionError, MemoryStore } from '../../src'
import { createHttpPolicy, type HttpAdapter, type RequestFacts, rateLimitHandle } from '../../src/internal-index'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

interface Req {
  readonly headers: Record<string, string | undefined>
  readonly ip?: string
}
interface Res {
  statusCode: number
  raw: EventEmitter
}

const adapter: HttpAdapter<Res> = { ownOptions: [], rawResponse: (res) => res.raw }
const QUIET = { warn() {}, error() {} }
const res = (): Res => ({ statusCode: 200, raw: new EventEmitter() })
const req = (headers: Record<string, string> = {}, ip = '192.0.2.1'): Req => ({ headers, ip })
const factsOf = (r: Req): RequestFacts => ({
  ip: r.ip,
  method: 'GET',
  path: '/',
  headers: r.headers,
  trustsProxy: () => false,
})

function setup(options: HttpLimitOptions<Req, Res>) {
  const policy = createHttpPolicy<Req, Res>({ logger: QUIET, ...options }, adapter)
  const handle = rateLimitHandle(policy, factsOf)
  const send = (r: Req) => policy.handle(r, res(), factsOf(r))
  return { policy, handle, send }
}

describe('limit and window functions', () => {
  test('a limit function that returns something else is a TypeError naming the option, at that request', async () => {
    const { send } = setup({ window: '1m', limit: (r) => Number(r.headers['x-limit']) })
    expect(await send(req({ 'x-limit': '5' }))).toMatchObject({ action: 'pass' })
    await expect(send(req({ 'x-limit': '0' }))).rejects.toThrow(
      'sluice: option "limit" must return a positive whole number (got 0)',
    )
    await expect(send(req({}))).rejects.toThrow(TypeError)
  })

  test('per rule, async, a window function for a window algorithm; its bad answer names rules[1].window', async () => {
    const { send } = setup({
      rules: [
        { name: 'a', limit: 5, window: '1m' },
        { name: 'b', limit: async () => 100, window: async (r) => (r.headers['x-window'] ?? '1h') as '1h' },
      ],
    })
    const passed = await send(req())
    expect(passed.action === 'pass' && passed.decision?.rules?.[1]).toMatchObject({ limit: 100, windowMs: 3_600_000 })
    await expect(send(req({ 'x-window': 'later' }))).rejects.toThrow(
      `sluice: option "rules[1].window" must return milliseconds or a duration such as '1m' (got "later")`,
    )
  })

  test.each<[string, HttpLimitOptions<Req, Res>, string]>([
    ['a bucket whose window is a function', { algorithm: 'token-bucket', limit: 5, window: () => '1m' }, 'window'],
    [
      'a quota whose window is a function',
      // A quota's window is a compile error too: this checks what JavaScript gets.
      { rules: [{ name: 'q', limit: 5, period: 'day', window: (() => '1d') as never }] },
      'rules[0].window',
    ],
    ['a plan that is not a number or function', { limit: '5' as unknown as number, window: '1m' }, 'limit'],
  ])('%s is refused at construction, naming the option', (_, options, option) => {
    expect(() => setup(options)).toThrow(InvalidOptionError)
    try {
      setup(options)
    } catch (error) {
      expect((error as InvalidOptionError).option).toBe(option)
    }
  })

  test('peek(key) with a limit function asks for the request instead; peek(req) uses its plan', async () => {
    const { send, handle } = setup({ window: '1m', limit: (r) => (r.headers['x-plan'] === 'pro' ? 100 : 10) })
    await send(req({ 'x-plan': 'pro' }))
    await expect(handle.peek('192.0.2.1')).rejects.toThrow(
      new TypeError(
        'sluice: peek(key) cannot tell which limits apply, since `limit` or `window` is a function of the request: ' +
          'give the request, peek(req)',
      ),
    )
    expect(await handle.peek(req({ 'x-plan': 'pro' }))).toMatchObject({ limit: 100, remaining: 99 })
    expect(await handle.peek(req({ 'x-plan': 'free' }))).toMatchObject({ limit: 10, remaining: 9 })
    // The limiter shows the placeholder its functions stand in for.
    expect(handle.limiter.rules[0]?.limit).toBe(1)
  })
})

describe('lists', () => {
  test('a list function that answers something else than true or false is a TypeError naming the option', async () => {
    const { send } = setup({ limit: 5, window: '1m', denyList: (r) => r.headers['x-deny'] as unknown as boolean })
    await expect(send(req({ 'x-deny': 'yes' }))).rejects.toThrow(
      'sluice: option "denyList" must return true or false (got "yes")',
    )
  })

  test.each<[string, unknown, string, RegExp]>([
    ['a string', '10.0.0.0/8', 'allowList', /must be an array of IP addresses and CIDR blocks, or a function/],
    ['a hostname', ['10.0.0.0/8', 'localhost'], 'allowList[1]', /must be an IP address or CIDR block/],
    ['an IPv4 prefix of 33', ['10.0.0.0/33'], 'denyList[0]', /prefix length from 0 to 32/],
    ['a port', ['192.0.2.1:80'], 'denyList[0]', /without a port/],
  ])('%s throws InvalidOptionError naming the entry', (_, list, option, message) => {
    const listOption = option.startsWith('allow') ? 'allowList' : 'denyList'
    try {
      setup({ limit: 5, window: '1m', [listOption]: list })
      throw new Error('expected an error')
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionError)
      expect((error as InvalidOptionError).option).toBe(option)
      expect((error as Error).message).toMatch(message)
    }
  })

  test('the deny list is decided before the key function, the cost and the store', async () => {
    let keyCalls = 0
    const store = new MemoryStore()
    const { send } = setup({
      limit: 5,
      window: '1m',
      store,
      key: () => {
        keyCalls++
        return 'k'
      },
      denyList: ['192.0.2.0/24'],
    })
    expect(await send(req({}, '192.0.2.99'))).toMatchObject({ action: 'reject', reason: 'forbidden', status: 403 })
    expect([keyCalls, store.size]).toEqual([0, 0])
  })
})

test('reset(key) lifts a block and forgets the count; keyOf gives one key per rule', async () => {
  const { send, handle } = setup({
    rules: [
      { name: 'user', limit: 1, window: '1m', block: '1h', key: (r) => `user:${r.headers['x-user']}` },
      { name: 'ip', limit: 100, window: '1m' },
    ],
  })
  const alice = req({ 'x-user': 'alice' })
  await send(alice)
  expect(await send(alice)).toMatchObject({ action: 'reject', decision: { retryAfterMs: 3_600_000 } })
  expect(await handle.keyOf(alice)).toEqual(['user:alice', '192.0.2.1'])
  await handle.reset(await handle.keyOf(alice))
  expect(await send(alice)).toMatchObject({ action: 'pass' })
})

describe('each rule gets what its own functions say, and keeps its static limit or window', () => {
  test.each<[string, HttpLimitOptions<Req, Res>, [number, number][]]>([
    ['a window function beside a static limit', { limit: 7, window: () => '1h' as const }, [[7, 3_600_000]]],
    ['a limit function beside a static window', { limit: () => 20, window: '1m' }, [[20, 60_000]]],
    ['an async limit function', { limit: async () => 20, window: '1m' }, [[20, 60_000]]],
    ['an async window function', { limit: 7, window: async () => '1h' as const }, [[7, 3_600_000]]],
    [
      'functions on the first and the third rule',
      {
        rules: [
          { name: 'a', limit: 7, window: () => '1h' as const },
          { name: 'b', limit: 9, window: '1m' },
          { name: 'c', limit: () => 30, window: '2h' },
        ],
      },
      [
        [7, 3_600_000],
        [9, 60_000],
        [30, 7_200_000],
      ],
    ],
    [
      'a bucket whose capacity is a function',
      { algorithm: 'token-bucket', limit: () => 3, window: '1m' },
      [[3, 60_000]],
    ],
  ])('%s', async (_, options, limits) => {
    const { send } = setup(options)
    const verdict = await send(req())
    if (verdict.action !== 'pass') throw new Error(`expected a pass, got ${verdict.action}`)
    const decision = verdict.decision
    expect((decision?.rules ?? [decision]).map((rule) => [rule?.limit, rule?.windowMs])).toEqual(limits)
  })

  test('without functions, peek(key) answers with the configured limit', async () => {
    const { send, handle } = setup({ rules: [{ name: 'ip', limit: 5, window: '1m' }] })
    await send(req())
    expect(await handle.peek('192.0.2.1')).toMatchObject({ limit: 5, remaining: 4 })
  })

  test("a bucket's window function is refused with the reason and the fix", () => {
    expect(() => setup({ algorithm: 'leaky-bucket', limit: 5, window: () => '1m' })).toThrow(
      'option "window" cannot be a function for a bucket: its state counts in units of its rate, which its window sets (make `limit`, the capacity, the function)',
    )
  })
})
