import { backoffDelayMs } from '../src'
import { seededRandom } from './helpers/random'

describe('backoffDelayMs: full jitter, retry n = 1 after the first attempt', () => {
  it('bounds retry n by min(cap, base * 2^(n-1)) and reaches the bound with random() near 1', () => {
    const nearlyOne = () => 0.999_999_9
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelayMs(n, { random: nearlyOne }))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ])
  })

  it('draws 0 with random() = 0', () => {
    expect(backoffDelayMs(4, { random: () => 0 })).toBe(0)
  })

  it('never leaves [0, bound] over many draws, with other base and cap', () => {
    const random = seededRandom(1)
    for (let n = 1; n <= 12; n++) {
      const bound = Math.min(3000, 100 * 2 ** (n - 1))
      for (let i = 0; i < 500; i++) {
        const wait = backoffDelayMs(n, { baseDelayMs: 100, maxDelayMs: 3000, random })
        expect(wait).toBeGreaterThanOrEqual(0)
        expect(wait).toBeLessThanOrEqual(bound)
      }
    }
  })

  it("without jitter ('none') is the bound itself", () => {
    expect(backoffDelayMs(3, { jitter: 'none' })).toBe(2000)
  })
})
