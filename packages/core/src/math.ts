// Integer helpers. Every quantity an algorithm keeps is an integer below 2^53, so these are exact in JS doubles
// and in Redis's Lua doubles alike; the Lua scripts use the same formulas (math.fmod is C fmod, exact here).

/** floor(a / b) for integers a and b > 0, exact where Math.floor(a / b) could round up. */
export function floorDiv(a: number, b: number): number {
  const r = a % b
  const q = (a - r) / b
  return r < 0 ? q - 1 : q
}

/** ceil(a / b) for integers a and b > 0. */
export function ceilDiv(a: number, b: number): number {
  const r = a % b
  const q = (a - r) / b
  return r > 0 ? q + 1 : q
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
