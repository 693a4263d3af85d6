import { createLimiter, InvalidOptionError } from '@sluice/core'
import { floorDiv } from '@sluice/core/store'
import fc from 'fast-check'
import { ceilDiv } from '../../src/util/math'

const MAX = Number.MAX_SAFE_INTEGER

/** floor(a / b) and ceil(a / b), computed exactly on BigInts. */
function exact(a: number, b: number): { floor: bigint; ceil: bigint } {
  const truncated = BigInt(a) / BigInt(b)
  const remainder = BigInt(a) % BigInt(b)
  return {
    floor: remainder < 0n ? truncated - 1n : truncated,
    ceil: remainder > 0n ? truncated + 1n : truncated,
  }
}

function expectExact(a: number, b: number): void {
  const { floor, ceil } = exact(a, b)
  // expect() only on a mismatch: thousands of matcher calls would make the property slow.
  if (BigInt(floorDiv(a, b)) !== floor) expect(`floorDiv(${a}, ${b}) = ${floorDiv(a, b)}`).toBe(`= ${floor}`)
  if (BigInt(ceilDiv(a, b)) !== ceil) expect(`ceilDiv(${a}, ${b}) = ${ceilDiv(a, b)}`).toBe(`= ${ceil}`)
}

test('floorDiv and ceilDiv are exact for any safe integer over any positive safe integer', () => {
  const dividend = fc.oneof(fc.integer({ min: -MAX, max: MAX }), fc.integer({ min: -1000, max: 1000 }))
  const divisor = fc.oneof(fc.integer({ min: 1, max: MAX }), fc.integer({ min: 1, max: 1000 }))
  fc.assert(
    fc.property(dividend, divisor, (a, b) => expectExact(a, b)),
    { numRuns: 5000 },
  )
})

test('quotients a hair from a whole number, where a rounding division would cross it, come out exact', () => {
  // a = m * b + r with |r| of 1 to 3 and |a| near 2^53: the quotient is as close to the whole number m as a
  // quotient of safe integers can be, relative to its size.
  const near = fc
    .record({
      b: fc.integer({ min: 2, max: 2 ** 40 }),
      top: fc.integer({ min: 0, max: 2 ** 20 }),
      r: fc.integer({ min: -3, max: 3 }).filter((r) => r !== 0),
      negative: fc.boolean(),
    })
    .map(({ b, top, r, negative }) => {
      const m = Math.floor(MAX / b) - top
      const a = m * b + r
      return { a: negative ? -a : a, b }
    })
    .filter(({ a, b }) => Number.isSafeInteger(a) && b > 3)
  fc.assert(
    fc.property(near, ({ a, b }) => expectExact(a, b)),
    { numRuns: 5000 },
  )
  expectExact(MAX, MAX + 1)
  expectExact(-MAX, MAX + 1)
  expectExact(MAX - 1, MAX)
  expectExact(-1, MAX)
  expectExact(MAX, 1)
  expectExact(-7, 2)
})

describe('the rules keep every quantity an algorithm divides below 2^53, where the division is exact', () => {
  test.each([
    ['(limit + 1) * window just at 2^53 - 1', { limit: MAX - 1, window: 1 }],
    // r = 8589.934593 / s is 8589934593 / 10^9 tokens per ms: a bucket counts in billionths of a token.
    ['a bucket of 9 007 199 billionths', { algorithm: 'token-bucket', limit: 9_007_199, rate: 8589.934593 }],
  ] as const)('%s is accepted', (_, options) => {
    expect(createLimiter(options).rules[0]?.limit).toBe(options.limit)
  })

  test.each([
    ['(limit + 1) * window past 2^53', { limit: MAX, window: 1 }, 'limit'],
    ['a limit of 2^40 per day', { limit: 2 ** 40, window: '1d' }, 'limit'],
    ['a bucket of 9 007 200 billionths', { algorithm: 'token-bucket', limit: 9_007_200, rate: 8589.934593 }, 'rate'],
    [
      'a bucket of 2^30 at a millionth of a token per second',
      { algorithm: 'token-bucket', limit: 2 ** 30, rate: 1e-6 },
      'rate',
    ],
  ] as const)('%s is refused, naming the option', (_, options, option) => {
    let thrown: unknown
    try {
      createLimiter(options)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError)
    expect((thrown as InvalidOptionError).option).toBe(option)
    expect((thrown as Error).message).toContain('too large or too fine to count exactly')
  })
})
