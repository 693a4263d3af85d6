import type { Step } from './types'

/**
 * Every algorithm makes its steps with this class, and its states with a class of its own, never with object
 * literals. V8 builds each literal from a template object whose shape it shares with every literal of the same
 * property names. When one algorithm widens a field of that shape (a `retryAfterMs` of Infinity, a `resetMs` past
 * 2^31 ms, a count past 2^31), the templates built before then go stale, and every literal made from a stale template
 * is built in the runtime from then on: about 1 µs instead of 10 ns, for the life of the process, in whichever
 * algorithms happened to build their templates first. So an algorithm's speed depended on which others the process
 * ran, and in what order. A constructor follows a widened shape at once.
 */
class AlgorithmStep<S> implements Step<S> {
  constructor(
    readonly state: S | undefined,
    readonly allowed: boolean,
    readonly remaining: number,
    readonly resetMs: number,
    readonly retryAfterMs: number,
    readonly delayMs: number,
    readonly aheadMs: number,
  ) {}
}

/**
 * The step of an admitted request, or of a peek that would admit: nothing to wait for. `aheadMs`: how far the key's
 * time is ahead of the clock (see `keyTime`).
 *
 * @example
 * return admitted(next, limit - next.used, toWindowEnd)
 */
export function admitted<S>(
  state: S | undefined,
  remaining: number,
  resetMs: number,
  delayMs = 0,
  aheadMs = 0,
): Step<S> {
  return new AlgorithmStep(state, true, remaining, resetMs, 0, delayMs, aheadMs)
}

/**
 * The step of a rejected request: the state as it was given (or moved back to a clock that stepped back).
 *
 * @example
 * return rejected(state, limit - used, toWindowEnd, toWindowEnd)
 */
export function rejected<S>(
  state: S | undefined,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
  aheadMs = 0,
): Step<S> {
  return new AlgorithmStep(state, false, remaining, resetMs, retryAfterMs, 0, aheadMs)
}
