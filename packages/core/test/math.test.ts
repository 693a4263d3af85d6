import { ceilDiv, floorDiv } from '@sluice/core/store'
import fc from 'fast-check'

const big = fc.integer({ min: -(2 ** 52), max: 2 ** 52 })

test('floorDiv and ceilDiv are exact for integers up to 2^52, where a plain division may round', () => {
  fc.assert(
    fc.property(big, fc.integer({ min: 1, max: 2 ** 40 }), (a, b) => {
      const exact = BigInt(a) / BigInt(b) // truncates toward zero
      const floor = BigInt(a) % BigInt(b) < 0n ? exact - 1n : exact
      const ceil = BigInt(a) % BigInt(b) > 0n ? exact + 1n : exact
      expect(BigInt(floorDiv(a, b))).toBe(floor)
      expect(BigInt(ceilDiv(a, b))).toBe(ceil)
    }),
    { numRuns: 20_000 },
  )
  // A quotient just below an integer, where a / b rounds up to it.
  const b = 3
  const a = 2 ** 52 * 1 - 1 - ((2 ** 52 - 1) % b) - 1
  expect(floorDiv(a, b)).toBe(Number(BigInt(a) / BigInt(b)))
  expect(floorDiv(9007199254740991, 9007199254740992)).toBe(0)
  expect(floorDiv(-1, 9007199254740991)).toBe(-1)
})
