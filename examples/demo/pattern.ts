/**
 * The burst experiment's arrival pattern: 80 requests from one client over about 5.2 seconds, in four phases.
 *
 * 1. A burst of 15 at 0.2 s, all in the same millisecond: more than the limit at once.
 * 2. 20 requests 10 ms apart from 1.90 s to 2.09 s: a burst that straddles the window boundary at 2 s, where a
 *    fixed window lets 10 through on each side, 20 within 200 ms.
 * 3. A steady stream of 25, one every 80 ms from 2.5 s (12.5 per second, a little over the rate of 10 per second).
 * 4. A last burst of 20, 10 ms apart from 5.0 s.
 */
export function arrivalTimes(): number[] {
  const times: number[] = []
  for (let i = 0; i < 15; i++) times.push(200)
  for (let i = 0; i < 20; i++) times.push(1900 + i * 10)
  for (let i = 0; i < 25; i++) times.push(2500 + i * 80)
  for (let i = 0; i < 20; i++) times.push(5000 + i * 10)
  return times
}

/** The four phases, as [start, end) in ms, for labelling the chart. */
export const PHASES: readonly (readonly [number, number])[] = [
  [0, 1000],
  [1900, 2100],
  [2500, 4500],
  [5000, 5200],
]

/** The largest number of events in any half-open interval [t, t + spanMs). */
export function largestInAnySpan(times: readonly number[], spanMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b)
  let largest = 0
  let first = 0
  for (let last = 0; last < sorted.length; last++) {
    while ((sorted[first] as number) <= (sorted[last] as number) - spanMs) first++
    largest = Math.max(largest, last - first + 1)
  }
  return largest
}

/** An arrival pattern of the playground, for a limit of `limit` per `windowMs`. */
export type Pattern = (limit: number, windowMs: number) => number[]

/**
 * The playground's patterns: the demo's 80 requests, and three shaped by the limit and window: a steady stream at
 * 1.5 times the rate, bursts of twice the limit each window, and one burst of twice the limit straddling a window
 * boundary (half just before it, half just after).
 */
export const PATTERNS: Readonly<Record<'experiment' | 'steady' | 'bursts' | 'straddle', Pattern>> = {
  experiment: () => arrivalTimes(),
  steady(limit, windowMs) {
    const gapMs = windowMs / (limit * 1.5)
    return Array.from({ length: Math.ceil(limit * 1.5 * 5) }, (_, i) => Math.round(i * gapMs))
  },
  bursts(limit, windowMs) {
    const times: number[] = []
    for (let w = 0; w < 5; w++) for (let i = 0; i < 2 * limit; i++) times.push(Math.round(w * windowMs + windowMs / 4))
    return times
  },
  straddle(limit, windowMs) {
    const spacingMs = Math.max(1, Math.floor(windowMs / (20 * limit)))
    const boundary = 2 * windowMs
    const times: number[] = []
    for (let i = limit; i > 0; i--) times.push(boundary - i * spacingMs)
    for (let i = 0; i < limit; i++) times.push(boundary + i * spacingMs)
    return times
  },
}
