// Integer helpers. Every quantity an algorithm keeps is an integer below 2^53, so these are exact in JS doubles
// and in Redis's Lua doubles alike. Lua may compute them another way (math.fmod is exact too): only the results must agree.

/**
 * floor(a / b) for a safe integer a and a positive safe integer b: exact, because a double division cannot round
 * a quotient of such integers across an integer. (Say q = a / b is not a whole number and m is the integer it
 * could round to. Then |q - m| = r / b for a whole r >= 1, so at least 1 / b, while a rounding moves q by at most
 * half the step of doubles in its binade [2^E, 2^(E+1)), 2^(E - 53) <= |q| * 2^-53 = |a| / b * 2^-53, and that is
 * below 1 / b when |a| < 2^53.)
 * The rules keep every quantity the algorithms divide below 2^53 (see `compileRule`); past it the bound is real:
 * Math.floor((3 * 2 ** 52 + 2) / 3) is one too many.
 * @example
 * floorDiv(-7, 2) // -4
 * floorDiv(9_007_199_254_740_990, 3) // 3_002_399_751_580_330
 */
export function floorDiv(a: number, b: number): number {
  return Math.floor(a / b)
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
