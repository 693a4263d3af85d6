// A `logger` must have warn() and error(); info() may be left out. Anything else is refused at construction.
import { createLimiter, InvalidOptionError } from '@sluice/core'

function loggerError(logger: unknown): InvalidOptionError {
  try {
    createLimiter({ limit: 1, window: '1s', logger: logger as Console })
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('expected createLimiter to throw')
}

test.each<[string, unknown, string]>([
  ['a string', 'console', 'must be an object with warn() and error() methods (got "console")'],
  ['a function', () => {}, 'must be an object with warn() and error() methods (got a function)'],
  ['no warn()', { error() {} }, 'must have warn() and error() methods (got object)'],
  ['no error()', { warn() {} }, 'must have warn() and error() methods (got object)'],
  ['warn that is no function', { warn: true, error() {} }, 'must have warn() and error() methods (got object)'],
  [
    'info that is no function',
    { warn() {}, error() {}, info: 'yes' },
    'must have warn() and error() methods (got object)',
  ],
])('a logger that is %s is refused, naming the option', (_, logger, reason) => {
  const error = loggerError(logger)
  expect(error.option).toBe('logger')
  expect(error.message).toBe(`sluice: option "logger" ${reason}`)
})

test('a logger with warn() and error() and no info() is taken', () => {
  expect(() => createLimiter({ limit: 1, window: '1s', logger: { warn() {}, error() {} } })).not.toThrow()
})
