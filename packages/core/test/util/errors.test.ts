import { InvalidOptionError, RateLimitError, StoreKeyError, StoreUnavailableError } from '../../src'

// The ESM and CommonJS builds each define these classes; `instanceof` reads a brand from the global symbol registry
// so that an error of one copy is an instance of the other's class (test/imports runs the two real builds).

/** An error as another copy of @sluice/core makes it: another class, the same brand. */
function fromAnotherCopy(code: string): Error {
  class StoreUnavailableError extends Error {}
  Object.defineProperty(StoreUnavailableError.prototype, Symbol.for('sluice.error'), { value: code })
  return new StoreUnavailableError('the store is down')
}

test("an error of another copy's class is an instance of this copy's class with the same code, and of no other", () => {
  const error = fromAnotherCopy('SLUICE_STORE_UNAVAILABLE')
  expect(error).toBeInstanceOf(StoreUnavailableError)
  expect(error).not.toBeInstanceOf(StoreKeyError)
  expect(error).not.toBeInstanceOf(InvalidOptionError)
})

test('an error that only looks like one (same name and code, no brand) is no instance', () => {
  const error = Object.assign(new Error('down'), { name: 'StoreUnavailableError', code: 'SLUICE_STORE_UNAVAILABLE' })
  expect(error).not.toBeInstanceOf(StoreUnavailableError)
  for (const value of [null, undefined, 'SLUICE_STORE_UNAVAILABLE', {}] as unknown[]) {
    expect((value as object) instanceof StoreUnavailableError).toBe(false)
  }
})

test("a subclass keeps the ordinary instanceof: its base's instances are not its own", () => {
  class RedisDownError extends StoreUnavailableError {}
  expect(new RedisDownError('down')).toBeInstanceOf(RedisDownError)
  expect(new RedisDownError('down')).toBeInstanceOf(StoreUnavailableError)
  expect(new StoreUnavailableError('down')).not.toBeInstanceOf(RedisDownError)
})

test('every error has its name and stable code', () => {
  const invalid = new InvalidOptionError('limit', 'must be positive')
  expect([invalid.name, invalid.code, invalid instanceof TypeError]).toEqual([
    'InvalidOptionError',
    'SLUICE_INVALID_OPTION',
    true,
  ])
  expect(new StoreUnavailableError('down').code).toBe('SLUICE_STORE_UNAVAILABLE')
  expect(new StoreKeyError('a list', 'user:1', 'default').code).toBe('SLUICE_STORE_KEY')
  expect(StoreKeyError.name).toBe('StoreKeyError')
  expect(RateLimitError.name).toBe('RateLimitError')
})
