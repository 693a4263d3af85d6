/**
 * The fastest of `rounds` runs of each function, in ms, the runs interleaved so that load from elsewhere on the
 * machine falls on both alike. Tests compare such figures as a ratio, never against a fixed number of ms.
 */
export function fastestMs(functions: readonly (() => unknown)[], rounds = 5): number[] {
  const fastest = functions.map(() => Number.POSITIVE_INFINITY)
  for (let round = 0; round < rounds; round++) {
    functions.forEach((fn, i) => {
      const start = process.hrtime.bigint()
      fn()
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      fastest[i] = Math.min(fastest[i]!, ms)
    })
  }
  return fastest
}
