import {
  checkFunction,
  checkLogger,
  checkObject,
  checkOneOf,
  checkWholeNumber,
  InvalidOptionError,
} from '@sluice/core/store'
import { checkDuration, checkOptionNames, isCost } from '../../src/util/checks'

/** The error a check throws: always an InvalidOptionError naming the option, in one message style. */
function thrown(check: () => unknown): InvalidOptionError {
  try {
    check()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('expected the check to throw')
}

test('a cost is a positive whole number, exact in a double', () => {
  expect([1, 7, Number.MAX_SAFE_INTEGER].every(isCost)).toBe(true)
  expect([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '1', undefined].some(isCost)).toBe(false)
})

test('one message style: option "<name>" must be <what it accepts> (got <what it got>), or "is required"', () => {
  expect(thrown(() => checkWholeNumber(0, 'maxKeys')).message).toBe(
    'sluice: option "maxKeys" must be a positive whole number (got 0)',
  )
  expect(thrown(() => checkWholeNumber(12.5, 'timeout', { unit: 'milliseconds' })).message).toBe(
    'sluice: option "timeout" must be a positive whole number of milliseconds (got 12.5)',
  )
  expect(thrown(() => checkWholeNumber(undefined, 'limit')).message).toBe('sluice: option "limit" is required')
  expect(thrown(() => checkWholeNumber(-1, 'shortCircuitMaxKeys', { min: 0 })).message).toBe(
    'sluice: option "shortCircuitMaxKeys" must be a whole number of at least 0 (got -1)',
  )
  expect(thrown(() => checkFunction('ip', 'key')).message).toBe('sluice: option "key" must be a function (got "ip")')
  expect(thrown(() => checkOneOf('retry', 'onError', ['open', 'closed'])).message).toBe(
    `sluice: option "onError" must be one of 'open', 'closed' (got "retry")`,
  )
  expect(thrown(() => checkObject(null, 'options', 'with a client')).message).toBe(
    'sluice: option "options" must be an object with a client (got null)',
  )
  expect(thrown(() => checkLogger({ warn() {} })).message).toBe(
    'sluice: option "logger" must have warn() and error() methods (got object)',
  )
})

test('what passes comes back as it is; an optional function may be left out', () => {
  expect(checkWholeNumber(0, 'n', { min: 0 })).toBe(0)
  expect(checkOneOf('open', 'onError', ['open', 'closed'])).toBe('open')
  expect(checkFunction(undefined, 'skip')).toBeUndefined()
  expect(checkLogger(console)).toBe(console)
  expect(checkLogger({ warn() {}, error() {} })).toBeDefined()
  expect(thrown(() => checkLogger({ warn() {}, error() {}, info: 'yes' })).option).toBe('logger')
})

test('options that are not an object are refused, whatever else they are', () => {
  for (const [value, got] of [
    [5, '5'],
    ['fast', '"fast"'],
    [true, 'true'],
    [[1], 'an array'],
    [undefined, 'undefined'],
  ] as const) {
    expect(thrown(() => checkObject(value, 'options')).message).toBe(
      `sluice: option "options" must be an object (got ${got})`,
    )
  }
})

test('a duration option: its fallback when absent, "is required" when it has none', () => {
  expect(checkDuration(undefined, 'maxWait', '1s')).toBe(1000)
  expect(checkDuration('2m', 'maxWait')).toBe(120_000)
  expect(thrown(() => checkDuration(undefined, 'maxWait')).message).toBe('sluice: option "maxWait" is required')
})

test("an unknown option is refused by name, pointing to ours when it is another library's name", () => {
  const known = ['limit', 'key']
  expect(() => checkOptionNames({ limit: 1, key: 'ip' }, known, 'concurrencyLimit')).not.toThrow()
  expect(thrown(() => checkOptionNames({ max: 5 }, known, 'concurrencyLimit', { max: 'limit' })).message).toBe(
    'sluice: option "max" is not an option of concurrencyLimit (use `limit`)',
  )
  expect(thrown(() => checkOptionNames({ maxInflight: 5 }, known, 'concurrencyLimit', { max: 'limit' })).message).toBe(
    'sluice: option "maxInflight" is not an option of concurrencyLimit',
  )
  expect(thrown(() => checkOptionNames({ window: 5 }, known, 'the adaptive limit', {}, 'adaptive.')).option).toBe(
    'adaptive.window',
  )
})
