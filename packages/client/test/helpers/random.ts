/** A seeded uniform generator in [0, 1) (mulberry32), so a jittered test draws the same numbers on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return function random() {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The largest number of times in any window [t, t + windowMs): the peak load a crowd puts on a server. */
export function peakInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b)
  let peak = 0
  let start = 0
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++
    peak = Math.max(peak, end - start + 1)
  }
  return peak
}
