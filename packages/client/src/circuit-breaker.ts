import { CircuitOpenError, invalidOption } from './errors'

/** `'closed'`: calls run. `'open'`: calls fail fast. `'half-open'`: the next call is a trial; others fail fast. */
export type CircuitState = 'closed' | 'open' | 'half-open'

/** Options of {@link circuitBreaker}. */
export interface CircuitBreakerOptions<T> {
  /** Consecutive failures that open the circuit. Default 5. */
  failureThreshold?: number
  /** How long the circuit stays open before it lets one trial call through, in ms. Default 30 000. */
  openMs?: number
  /**
   * Whether a call that resolved still counts as a failure. A rejected call always does. Default: a result with a
   * numeric `status` of 500 or more (a fetch `Response` from a failing server) is a failure; anything else is not.
   * A 429 is not a failure by default: the server is up and asking this client to slow down, which backoff handles.
   */
  isFailure?: (result: T) => boolean
  /**
   * How long a half-open circuit waits for its trial call, in ms. A trial that has not settled by then counts as
   * failed: the circuit opens again for `openMs`, and the trial's late outcome is ignored. Default 30 000.
   */
  trialTimeoutMs?: number
  /** The answer to a call refused while the circuit is open; without it such a call rejects with a {@link CircuitOpenError}. */
  fallback?: (error: CircuitOpenError) => T | Promise<T>
  /** The time in ms. Default `Date.now`; inject one in tests. */
  clock?: () => number
  /** Called on every change of state, for logging and metrics. */
  onStateChange?: (state: CircuitState, previous: CircuitState) => void
}

/** A circuit breaker: call it with a task. Its state and failure count can be read, and it can be reset. */
export interface CircuitBreaker<T> {
  (task: () => Promise<T>): Promise<T>
  /** The state now (an open circuit whose time is up reads `'half-open'`). */
  readonly state: CircuitState
  /** Consecutive failures counted while closed. */
  readonly failures: number
  /** Closes the circuit and forgets the failures; calls still in flight no longer count. */
  reset(): void
}

/**
 * Stops calling a service that keeps failing. After `failureThreshold` (5) consecutive failures the circuit opens:
 * for `openMs` (30 s) calls fail fast with a {@link CircuitOpenError}, or get the `fallback`, without running.
 * Then it is half-open: the next call runs as a trial while concurrent ones keep failing fast. A successful trial
 * closes the circuit; a failed one, or one still running after `trialTimeoutMs` (30 s), opens it for another
 * `openMs`. A success while closed resets the count. A call counts only if the circuit has not changed state since
 * it started, so a late answer never moves a circuit that has moved on.
 *
 * @example
 * const breaker = circuitBreaker<Response>({ failureThreshold: 5, openMs: 30_000 })
 * const res = await breaker(() => politeFetch('https://api.example.com/things'))
 */
export function circuitBreaker<T = Response>(options: CircuitBreakerOptions<T> = {}): CircuitBreaker<T> {
  const failureThreshold = options.failureThreshold ?? 5
  const openMs = options.openMs ?? 30_000
  const trialTimeoutMs = options.trialTimeoutMs ?? 30_000
  const clock = options.clock ?? Date.now
  const isFailure = options.isFailure ?? isServerErrorResponse
  const { fallback, onStateChange } = options
  if (!Number.isInteger(failureThreshold) || failureThreshold < 1) {
    invalidOption('failureThreshold', 'must be an integer >= 1', options.failureThreshold)
  }
  if (typeof openMs !== 'number' || !Number.isFinite(openMs) || openMs < 0) {
    invalidOption('openMs', 'must be a finite number of ms >= 0', options.openMs)
  }
  if (typeof trialTimeoutMs !== 'number' || !Number.isFinite(trialTimeoutMs) || trialTimeoutMs <= 0) {
    invalidOption('trialTimeoutMs', 'must be a finite number of ms > 0', options.trialTimeoutMs)
  }
  for (const name of ['clock', 'isFailure'] as const) {
    if (typeof options[name] !== 'undefined' && typeof options[name] !== 'function') {
      invalidOption(name, 'must be a function', options[name])
    }
  }
  for (const name of ['fallback', 'onStateChange'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      invalidOption(name, 'must be a function', options[name])
    }
  }

  let stored: 'closed' | 'open' = 'closed'
  let failures = 0
  let openedAt = 0
  let trialInFlight = false
  let trialStartedAt = 0
  // Counts the changes of state. A call remembers the epoch it started in, and its outcome is ignored once the
  // epoch has moved: after a reset, after the circuit opened or closed, after its trial timed out.
  let epoch = 0
  let reported: CircuitState = 'closed'

  const currentState = (): CircuitState => {
    if (trialInFlight && clock() - trialStartedAt >= trialTimeoutMs) {
      trialInFlight = false
      open(trialStartedAt + trialTimeoutMs)
    }
    if (stored === 'closed') return 'closed'
    return trialInFlight || clock() - openedAt >= openMs ? 'half-open' : 'open'
  }
  // The state is derived from the clock, so a change (open -> half-open) is reported when it is next observed.
  const report = () => {
    const state = currentState()
    if (state !== reported) {
      const previous = reported
      reported = state
      onStateChange?.(state, previous)
    }
  }
  function open(at: number) {
    stored = 'open'
    openedAt = at
    epoch++
    report()
  }
  function close() {
    stored = 'closed'
    failures = 0
    trialInFlight = false
    epoch++
    report()
  }

  const breaker = async function callThroughBreaker(task: () => Promise<T>): Promise<T> {
    report()
    const state = currentState()
    if (state === 'open' || (state === 'half-open' && trialInFlight)) {
      const error = new CircuitOpenError(state, state === 'open' ? openedAt + openMs - clock() : 0)
      if (fallback) return fallback(error)
      throw error
    }
    const trial = state === 'half-open'
    if (trial) {
      trialInFlight = true
      trialStartedAt = clock()
    }
    const startedIn = epoch
    let result: T
    try {
      result = await task()
    } catch (error) {
      settle(startedIn, trial, true)
      throw error
    }
    let failed: boolean
    try {
      failed = isFailure(result)
    } catch (error) {
      // A result the caller's own test cannot judge is not evidence of health; the caller gets the test's error.
      settle(startedIn, trial, true)
      throw error
    }
    settle(startedIn, trial, failed)
    return result
  }

  function settle(startedIn: number, trial: boolean, failed: boolean) {
    currentState() // a trial past its timeout is given up first, which makes its own outcome stale
    if (startedIn !== epoch) return
    if (trial) {
      trialInFlight = false
      if (failed) open(clock())
      else close()
      return
    }
    if (!failed) {
      failures = 0
      return
    }
    failures++
    if (failures >= failureThreshold) open(clock())
  }

  Object.defineProperties(breaker, {
    state: { get: () => currentState(), enumerable: true },
    failures: { get: () => failures, enumerable: true },
    reset: { value: close, enumerable: true },
  })
  return breaker as CircuitBreaker<T>
}

/** A fetch Response (or anything with a numeric status) of 500 or more. */
function isServerErrorResponse(result: unknown): boolean {
  if (typeof result !== 'object' || result === null || !('status' in result)) return false
  const { status } = result
  return typeof status === 'number' && status >= 500
}
