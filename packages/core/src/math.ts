// Integer helpers. Every quantity an algorithm keeps is an integer below 2^53, so these are exact in JS doubles
// and in Redis's Lua doubles alike. Lua may compute them another way (math.fmod is exact too): only the results must agree.

/**
 * floor(a / b) for integers a and b > 0 (|a| + b below 2^53), exact where Math.floor(a / b) alone could be off by
 * one: the rounded quotient is corrected with multiplications, which are exact here (and much cheaper than `%`
 * on numbers too large for a small integer).
 * @example
 * floorDiv(-7, 2) // -4
 * floorDiv(9_007_199_254_740_990, 3) // exact, where Math.floor(a / b) may not be
 */
export function floorDiv(a: number, b: number): number {
  const q = Math.floor(a / b)
  if (q * b > a) return q - 1
  if ((q + 1) * b <= a) return q + 1
  return q
}

/**
 * ceil(a / b) for integers a and b > 0.
 *
 * @example
 * ceilDiv(7, 2) // 4
 */
export function ceilDiv(a: number, b: number): number {
  return -floorDiv(-a, b)
}

/** Greatest common divisor of two non-negative integers. */
export function gcd(a: number, b: number): number {
  while (b !== 0) {
    const t = a % b
    a = b
    b = t
  }
  return a
}
