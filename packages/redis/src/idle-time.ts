import { performance } from 'node:perf_hooks'

let cached: number | undefined
const forget = () => {
  cached = undefined
}

/**
 * How long this process's event loop has waited for I/O with nothing to do, in ms since it started (the `idle` of
 * Node's event loop utilization). It does not move while the instance runs code, so a wait measured on it leaves out
 * the time this instance was too busy to read a reply. It can only move between two turns of the event loop, so it is
 * read once per turn and kept until the current microtasks are done.
 *
 * @example
 * const idleAtSend = idleMs()
 * // ... later: idleMs() - idleAtSend is how long the instance sat waiting, free to read a reply
 */
export function idleMs(): number {
  if (cached === undefined) {
    // The `idle` of eventLoopUtilization(), read without the rest it works out (the active time, a new object).
    cached = performance.nodeTiming.idleTime
    queueMicrotask(forget)
  }
  return cached
}
