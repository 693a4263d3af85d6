import {
  createLimiter,
  InvalidOptionError,
  MemoryStore,
  RateLimitError,
  StoreKeyError,
  StoreUnavailableError,
} from '@sluice/core'
import { describeValue } from '@sluice/core/internal'

/** A limiter on a memory store whose clock stays at `now` until the test moves it. */
function at(now: number, options: Parameters<typeof createLimiter>[0]) {
  const time = { now }
  return { time, limiter: createLimiter({ ...options, store: new MemoryStore({ clock: () => time.now }) }) }
}

describe('createLimiter', () => {
  test('a default cost applies to every call that gives none, and a call may give its own', async () => {
    const { limiter } = at(0, { algorithm: 'fixed-window', limit: 10, window: '1m', cost: 3 })
    expect((await limiter.consume('k')).remaining).toBe(7)
    expect((await limiter.consume('k')).remaining).toBe(4)
    expect((await limiter.consume('k', 2)).remaining).toBe(2)
    expect((await limiter.peek('k')).allowed).toBe(false) // a peek asks about the default cost too...
    expect((await limiter.peek('k', 1)).allowed).toBe(true)
    await limiter.refund('k') // ...and a refund gives it back
    expect((await limiter.peek('k', 1)).remaining).toBe(5)
  })

  test('one key for stacked rules counts it under every rule', async () => {
    const { limiter } = at(0, {
      algorithm: 'fixed-window',
      rules: [
        { name: 'minute', limit: 5, window: '1m' },
        { name: 'hour', limit: 8, window: '1h' },
      ],
    })
    await limiter.consume('k', 2)
    expect((await limiter.peek('k')).rules?.map((d) => d.remaining)).toEqual([3, 6])
    expect((await limiter.peek(['k', 'other'])).rules?.map((d) => d.remaining)).toEqual([3, 8])
  })

  test('the rule name and algorithm of a single-rule limiter', () => {
    expect(createLimiter({ limit: 1, window: '1s' }).rules[0]).toMatchObject({
      name: 'default',
      algorithm: 'sliding-window',
      keySpace: 'sluice:default:sw:',
    })
    expect(
      createLimiter({ name: 'login', prefix: 'app', algorithm: 'token-bucket', limit: 1, rate: 2 }).rules[0],
    ).toMatchObject({ name: 'login', keySpace: 'app:login:tb:', windowMs: 500 })
  })

  test.each([
    [
      'a prefix that is not a string',
      { limit: 1, window: '1s', prefix: 7 },
      'prefix',
      'must be a non-empty string (got 7)',
    ],
    ['rules that are not an array', { rules: 'user' }, 'rules', 'must be a non-empty array of rules (got "user")'],
    ['a window beside rules', { window: '1s', rules: [{ limit: 1, window: '1s' }] }, 'window', 'goes inside each rule'],
    ['a name beside rules', { name: 'x', rules: [{ limit: 1, window: '1s' }] }, 'name', 'goes inside each rule'],
    ['a rate beside rules', { rate: 1, rules: [{ limit: 1, window: '1s' }] }, 'rate', 'goes inside each rule'],
    ['a store without bind()', { limit: 1, window: '1s', store: 42 }, 'store', 'must be a Store, with bind() (got 42)'],
    [
      'a logger without error()',
      { limit: 1, window: '1s', logger: { warn() {} } },
      'logger',
      'must have warn() and error()',
    ],
    [
      'a logger whose info is not a function',
      { limit: 1, window: '1s', logger: { warn() {}, error() {}, info: 1 } },
      'logger',
      '',
    ],
    ['a rule that is not an object', { rules: [null] }, 'rules[0]', 'must be an object (got null)'],
  ])('%s is an error naming the option', (_, options, option, message) => {
    let thrown: unknown
    try {
      createLimiter(options as never)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError)
    expect((thrown as InvalidOptionError).option).toBe(option)
    expect((thrown as Error).message).toContain(`option "${option}" ${message}`)
  })

  test('a logger without info() is accepted (info is optional)', () => {
    expect(() => createLimiter({ limit: 1, window: '1s', logger: { warn() {}, error() {} } })).not.toThrow()
  })

  test('a key of the wrong shape is refused at the call, saying what it got', async () => {
    const { limiter } = at(0, {
      rules: [
        { name: 'a', limit: 1, window: '1s' },
        { name: 'b', limit: 1, window: '1s' },
      ],
    })
    await expect(limiter.consume(['a', 7 as never])).rejects.toThrow(
      'sluice: key must be a string or an array of 2 strings, one per rule (got an array)',
    )
    await expect(limiter.peek(['a', 'b', 'c'])).rejects.toThrow(TypeError)
    await expect(limiter.refund('k', 0)).rejects.toThrow('sluice: cost must be a positive whole number (got 0)')
    await expect(limiter.reset(42 as never)).rejects.toThrow('(got 42)')
  })
})

describe('costs that can never fit stacked rules', () => {
  test('the decision names the rule the cost exceeds; a rule it fits reports no wait', async () => {
    const { limiter } = at(0, {
      algorithm: 'fixed-window',
      rules: [
        { name: 'big', limit: 10, window: '1m' },
        { name: 'small', limit: 3, window: '1m' },
      ],
    })
    await limiter.consume('k')
    const decision = await limiter.consume('k', 5)
    expect(decision).toMatchObject({ allowed: false, rule: 'small', costExceedsCapacity: true, cost: 5, remaining: 2 })
    expect(decision.rules?.map((d) => [d.rule, d.allowed, d.costExceedsCapacity, d.retryAfterMs, d.cost])).toEqual([
      ['big', true, false, 0, 5],
      ['small', false, true, Number.POSITIVE_INFINITY, 5],
    ])
    // Nothing was charged.
    expect((await limiter.peek('k')).rules?.map((d) => d.remaining)).toEqual([9, 2])
  })

  test('a cost just at the smallest limit is an ordinary request', async () => {
    const { limiter } = at(0, {
      algorithm: 'fixed-window',
      rules: [
        { name: 'big', limit: 10, window: '1m' },
        { name: 'small', limit: 3, window: '1m' },
      ],
    })
    expect(await limiter.consume('k', 3)).toMatchObject({ allowed: true, costExceedsCapacity: false, remaining: 0 })
  })
})

describe('schedule and enqueue', () => {
  test('a full queue rejects with a RateLimitError that says which rule and how long to wait', async () => {
    const { limiter } = at(0, { algorithm: 'leaky-bucket', limit: 1, window: '1s' })
    await limiter.enqueue('sms')
    const error = await limiter.schedule('sms').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitError)
    expect((error as RateLimitError).message).toBe('sluice: rate limit "default" exceeded; retry after 1000 ms')
    expect((error as RateLimitError).name).toBe('RateLimitError')
    const tooBig = await limiter.schedule('sms', 2).catch((e: unknown) => e)
    expect((tooBig as RateLimitError).message).toBe('sluice: a cost of 2 can never fit rule "default" (limit 1)')
  })

  test('an aborted signal stops schedule before it takes a place', async () => {
    const { limiter } = at(0, { algorithm: 'leaky-bucket', limit: 1, window: '1s' })
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    await expect(limiter.schedule('sms', 1, { signal: controller.signal })).rejects.toThrow('gone')
    expect((await limiter.enqueue('sms')).allowed).toBe(true) // the place was still free
  })

  test('a limiter with a rule that is not a leaky bucket has no queue', async () => {
    const { limiter } = at(0, {
      rules: [
        { name: 'a', algorithm: 'leaky-bucket', limit: 1, window: '1s' },
        { name: 'b', algorithm: 'token-bucket', limit: 1, window: '1s' },
      ],
    })
    await expect(limiter.enqueue(['x', 'y'])).rejects.toThrow(
      "sluice: a queue needs every rule to use algorithm 'leaky-bucket'",
    )
  })
})

describe('errors', () => {
  test('describeValue says what a bad value was, briefly', () => {
    expect([
      describeValue('x'),
      describeValue(1.5),
      describeValue(false),
      describeValue(null),
      describeValue(undefined),
      describeValue(() => 1),
      describeValue([1]),
      describeValue({ a: 1 }),
      describeValue(10n),
    ]).toEqual(['"x"', '1.5', 'false', 'null', 'undefined', 'a function', 'an array', 'object', 'bigint'])
  })

  test('StoreUnavailableError carries its cause and its name', () => {
    const cause = new Error('ECONNREFUSED')
    const error = new StoreUnavailableError('redis is away', { cause })
    expect(error).toBeInstanceOf(Error)
    expect([error.name, error.message, error.cause]).toEqual(['StoreUnavailableError', 'redis is away', cause])
    expect(new InvalidOptionError('limit', 'is required').name).toBe('InvalidOptionError')
  })

  test('StoreKeyError names the key and the rule a store could not decide for, with its cause', () => {
    const cause = new Error('WRONGTYPE')
    const error = new StoreKeyError('sluice: key "k" of rule "hour" holds a list', 'k', 'hour', {
      cause,
      eventKeys: 'raw',
    })
    expect(error).toBeInstanceOf(Error)
    expect([error.name, error.message, error.key, error.rule, error.cause]).toEqual([
      'StoreKeyError',
      'sluice: key "k" of rule "hour" holds a list',
      'k',
      'hour',
      cause,
    ])
  })
})

describe('the store and the logger a limiter is given', () => {
  test.each([
    ['a function', () => ({})],
    ['a string', 'redis://127.0.0.1'],
    ['an object without bind()', { get() {} }],
  ])('a store that is %s is refused, naming `store`', (_, store) => {
    expect(() => createLimiter({ limit: 1, window: '1s', store: store as never })).toThrow(
      /^sluice: option "store" must be a Store, with bind\(\)/,
    )
  })

  test("warnings about shared counts go to the limiter's logger, for its queue too, and a plan warns of nothing", () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const store = new MemoryStore()
      const warnings: string[] = []
      const logger = { warn: (m: string) => warnings.push(m), error() {} }
      createLimiter({ algorithm: 'leaky-bucket', limit: 5, window: '1s', store, logger })
      // The same name on the same store: the rule's key space and its queue's are both shared.
      const second = createLimiter({ algorithm: 'leaky-bucket', limit: 5, window: '1s', store, logger })
      expect(warnings).toHaveLength(2)
      // A plan counts in its limiter's own key spaces: nothing to warn of.
      const solo = createLimiter({ limit: 5, window: '1s', store: new MemoryStore(), logger })
      solo.withLimits({ limit: 50 })
      second.withLimits({ limit: 50 })
      expect(warnings).toHaveLength(2)
      expect(warn).not.toHaveBeenCalled()
    } finally {
      warn.mockRestore()
    }
  })
})
