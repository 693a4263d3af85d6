import { createLimiter, InvalidOptionError, type LimiterOptions, MemoryStore, parseDuration } from '@sluice/core'

function optionAtFault(options: unknown): string {
  try {
    createLimiter(options as LimiterOptions)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return (error as InvalidOptionError).option
  }
  throw new Error('expected createLimiter to throw')
}

describe('invalid options throw at construction, naming the option', () => {
  test.each([
    ['limit 0', { limit: 0, window: '1s' }, 'limit'],
    ['a negative limit', { limit: -5, window: '1s' }, 'limit'],
    ['a NaN limit', { limit: Number.NaN, window: '1s' }, 'limit'],
    ['an infinite limit', { limit: Number.POSITIVE_INFINITY, window: '1s' }, 'limit'],
    ['a fractional limit', { limit: 1.5, window: '1s' }, 'limit'],
    ['a missing limit', { window: '1s' }, 'limit'],
    ['window 5 parsecs', { limit: 5, window: '5 parsecs' }, 'window'],
    ['window 0', { limit: 5, window: 0 }, 'window'],
    ['a negative window', { limit: 5, window: -1000 }, 'window'],
    ['a missing window', { limit: 5 }, 'window'],
    ['an unknown algorithm', { limit: 5, window: '1s', algorithm: 'magic' }, 'algorithm'],
    ['a rate on a window algorithm', { limit: 5, window: '1s', rate: 3 }, 'rate'],
    ['a zero rate', { algorithm: 'token-bucket', limit: 5, rate: 0 }, 'rate'],
    ['a cost of 0', { limit: 5, window: '1s', cost: 0 }, 'cost'],
    ['a cost of -1', { limit: 5, window: '1s', cost: -1 }, 'cost'],
    ['a cost of 1.5', { limit: 5, window: '1s', cost: 1.5 }, 'cost'],
    ['an empty rules list', { rules: [] }, 'rules'],
    [
      'rules with duplicate names',
      {
        rules: [
          { name: 'user', limit: 1, window: '1s' },
          { name: 'user', limit: 2, window: '1s' },
        ],
      },
      'rules[1].name',
    ],
    [
      'an unnamed rule among several',
      {
        rules: [
          { name: 'user', limit: 1, window: '1s' },
          { limit: 2, window: '1s' },
        ],
      },
      'rules[1].name',
    ],
    ['a bad limit inside a rule', { rules: [{ name: 'user', limit: 0, window: '1s' }] }, 'rules[0].limit'],
    ['a limit beside rules', { limit: 3, rules: [{ name: 'user', limit: 1, window: '1s' }] }, 'limit'],
    ['an empty prefix', { limit: 3, window: '1s', prefix: '' }, 'prefix'],
    ['a store without apply', { limit: 3, window: '1s', store: {} }, 'store'],
  ])('%s', (_, options, option) => {
    expect(optionAtFault(options)).toBe(option)
  })

  test('the message names the option and the accepted values', () => {
    expect(() => createLimiter({ limit: 5, window: '1s', algorithm: 'magic' as never })).toThrow(
      /option "algorithm" must be one of 'fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket'/,
    )
    expect(() => createLimiter({ limit: 5, window: '5 parsecs' as never })).toThrow(/option "window"/)
  })

  test('a rate is kept to a millionth of a token per second, up to 9e9: outside that it is refused, not rounded', () => {
    const bucket = (rate: number) => () => createLimiter({ algorithm: 'token-bucket', limit: 5, rate })
    expect(bucket(0.0000004)).toThrow('option "rate" must be between 0.000001 and 9e9 tokens per second (got 4e-7)')
    expect(bucket(1e10)).toThrow('option "rate" must be between 0.000001 and 9e9 tokens per second (got 10000000000)')
    expect(createLimiter({ algorithm: 'token-bucket', limit: 5, rate: 0.000001 }).rules[0]?.windowMs).toBe(5e9)
    expect(createLimiter({ algorithm: 'token-bucket', limit: 5, rate: 9e9 }).rules[0]).toMatchObject({ limit: 5 })
  })

  test('MemoryStore options are checked too', () => {
    expect(() => new MemoryStore({ maxKeys: 0 })).toThrow(/option "maxKeys"/)
    expect(() => new MemoryStore({ clock: 5 as never })).toThrow(/option "clock"/)
  })

  test('bad calls reject with a clear error rather than a wrong answer', async () => {
    const limiter = createLimiter({ limit: 5, window: '1s' })
    await expect(limiter.consume('k', 0)).rejects.toThrow(/cost must be a positive whole number/)
    await expect(limiter.consume('k', 2.5)).rejects.toThrow(/cost/)
    await expect(limiter.consume(42 as never)).rejects.toThrow(/key must be a string/)
    const stacked = createLimiter({
      rules: [
        { name: 'a', limit: 1, window: '1s' },
        { name: 'b', limit: 1, window: '1s' },
      ],
    })
    await expect(stacked.consume(['only-one'])).rejects.toThrow(/array of 2 strings/)
    await expect(limiter.schedule('k')).rejects.toThrow(/leaky-bucket/)
  })
})

describe('durations', () => {
  test.each([
    ['500ms', 500],
    ['10s', 10_000],
    ['1.5s', 1500],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    [250, 250],
    ['1.1s', 1100], // 1.1 * 1000 is 1100.0000000000002 in doubles
    [' 2 s ', 2000],
  ])('%j is %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms)
  })

  test.each(['', '10', '1 fortnight', '1.0001ms', '-1s', 'NaNs', 0, 1.5, Number.NaN])('%j is rejected', (input) => {
    expect(() => parseDuration(input)).toThrow(InvalidOptionError)
  })

  test.each([true, null, undefined, {}])('%j is not a duration at all: the error names the option', (input) => {
    expect(() => parseDuration(input, 'rules[2].window')).toThrow(
      /option "rules\[2\].window" must be a number of milliseconds or a duration string/,
    )
  })
})

describe('rule names', () => {
  test.each(['a b', '', 'x'.repeat(65), 'ümlaut'])('the rule name %j is refused, naming the option', (name) => {
    expect(optionAtFault({ rules: [{ name, limit: 1, window: '1s' }] })).toBe('rules[0].name')
  })
})
