import { createLimiter, InvalidOptionError, type LimiterOptions } from '@sluice/core'

/** The error creating a limiter with `options` throws: an InvalidOptionError naming the option at fault. */
function refusal(options: unknown): InvalidOptionError {
  try {
    createLimiter(options as LimiterOptions)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('expected createLimiter to throw')
}

const MAX_EXACT = Number.MAX_SAFE_INTEGER

describe('rule options: each mistake is refused at construction, naming the option and saying why', () => {
  test.each([
    ['no limit and no rules', { window: '1s' }, 'limit', 'is required (or give `rules`)'],
    [
      'a quota with a bucket algorithm',
      { limit: 5, period: 'day', algorithm: 'token-bucket' },
      'algorithm',
      "cannot be 'token-bucket' with `period`: a quota is a fixed window on the calendar",
    ],
    ['a rule that is null', { rules: [null, { name: 'b', limit: 1, window: '1s' }] }, 'rules[0]', 'must be an object'],
    ['a rule that is a number', { rules: [5, { name: 'b', limit: 1, window: '1s' }] }, 'rules[0]', 'must be an object'],
    [
      'an unnamed rule among several',
      {
        rules: [
          { name: 'a', limit: 1, window: '1s' },
          { limit: 1, window: '1m' },
        ],
      },
      'rules[1].name',
      'is required when there are several rules',
    ],
    [
      'two rules with one name',
      {
        rules: [
          { name: 'a', limit: 1, window: '1s' },
          { name: 'a', limit: 5, window: '1m' },
        ],
      },
      'rules[1].name',
      '"a" is used by two rules',
    ],
    [
      'a name with a space',
      { name: 'per user', limit: 1, window: '1s' },
      'name',
      `must be 1 to 64 letters, digits, '_', '.' or '-' (got "per user")`,
    ],
    [
      'a rate for a window algorithm',
      { algorithm: 'fixed-window', limit: 1, rate: 2 },
      'rate',
      "applies only to 'token-bucket' and 'leaky-bucket' (algorithm is 'fixed-window')",
    ],
    [
      'a rate of 0',
      { algorithm: 'token-bucket', limit: 1, rate: 0 },
      'rate',
      'must be a positive number of tokens per second (got 0)',
    ],
    [
      'a negative rate',
      { algorithm: 'leaky-bucket', limit: 1, rate: -2 },
      'rate',
      'must be a positive number of tokens per second (got -2)',
    ],
    [
      'a rate finer than a millionth',
      { algorithm: 'token-bucket', limit: 1, rate: 1e-7 },
      'rate',
      'must be between 0.000001 and 9e9 tokens per second (got 1e-7)',
    ],
    [
      // A second is 1000 units of the window: (limit + 1) * 1000 would pass 2^53.
      'a limit whose count over a window cannot be exact',
      { algorithm: 'sliding-window', limit: Math.floor(MAX_EXACT / 1000), window: '1s' },
      'limit',
      'is too large or too fine to count exactly',
    ],
    [
      // A token a million seconds apart: a bucket of a million tokens fills in 10^15 ms.
      'a bucket whose fill time cannot be exact',
      { algorithm: 'token-bucket', limit: 1_000_000, rate: 0.000001 },
      'rate',
      'is too large or too fine to count exactly',
    ],
    [
      'a rule in rules with a bad limit',
      {
        rules: [
          { name: 'a', limit: 1, window: '1s' },
          { name: 'b', limit: 0, window: '1s' },
        ],
      },
      'rules[1].limit',
      'must be a positive whole number (got 0)',
    ],
  ])('%s', (_, options, option, gist) => {
    const error = refusal(options)
    expect(error.option).toBe(option)
    expect(error.message).toContain(`option "${option}" ${gist}`)
  })

  test.each([
    ['fixed-window', 'sluice: option "window" is required'],
    ['sliding-log', 'sluice: option "window" is required'],
    ['token-bucket', 'sluice: option "window" is required (or give a rate)'],
    ['leaky-bucket', 'sluice: option "rules[0].window" is required (or give a rate)'],
  ])('a %s rule with no window says so, and a bucket that a rate would do', (algorithm, message) => {
    const options = algorithm === 'leaky-bucket' ? { algorithm, rules: [{ limit: 1 }] } : { algorithm, limit: 1 }
    expect(refusal(options).message).toBe(message)
  })
})

describe('rules that are accepted', () => {
  test('one rule in `rules` needs no name: it is the default rule', async () => {
    const limiter = createLimiter({ algorithm: 'fixed-window', rules: [{ limit: 2, window: '1m' }] })
    expect(limiter.rules.map((rule) => rule.name)).toEqual(['default'])
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, rule: 'default', remaining: 1 })
  })

  test('the largest limits that still count exactly are accepted', () => {
    const limit = Math.floor(MAX_EXACT / 1000) - 1
    expect(createLimiter({ algorithm: 'sliding-window', limit, window: '1s' }).rules[0]?.limit).toBe(limit)
    expect(() => createLimiter({ algorithm: 'token-bucket', limit: 1000, rate: 0.000001 })).not.toThrow()
  })

  test('a rate is kept as a reduced fraction of tokens per millisecond, so a bucket state means one thing', () => {
    expect(createLimiter({ algorithm: 'token-bucket', limit: 10, rate: 2 }).rules[0]).toMatchObject({
      rateNumerator: 1,
      rateDenominator: 500,
      windowMs: 5000,
    })
    expect(createLimiter({ algorithm: 'leaky-bucket', limit: 3, rate: 0.75 }).rules[0]).toMatchObject({
      rateNumerator: 3,
      rateDenominator: 4000,
      windowMs: 4000,
    })
  })

  test('a rule with a block keeps its block ends under prefix:name:block:', () => {
    const limiter = createLimiter({ prefix: 'app', name: 'login', limit: 5, window: '1m', block: '15m' })
    expect(limiter.rules[0]).toMatchObject({ blockMs: 900_000, blockKeySpace: 'app:login:block:' })
  })
})
