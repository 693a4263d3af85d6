import { checkObject, checkOptionNames, checkWholeNumber } from '../util/checks'
import { describe, InvalidOptionError } from '../util/errors'

/**
 * Options of the adaptive in-flight ceiling (`adaptive: true` takes every default).
 *
 * @example
 * shedLoad({ maxInFlight: 200, adaptive: { minInFlight: 4, tolerance: 1.5 } })
 */
export interface AdaptiveLimitOptions {
  /** The ceiling never goes below this. Default 1. */
  minInFlight?: number
  /** How far the latency may rise above its baseline before the ceiling comes down: 1.5 allows +50%. Default 1.5. */
  tolerance?: number
}

const DECREASE = 0.9
const BASELINE_DRIFT = 1.01
const MIN_WINDOW_SAMPLES = 20

/**
 * An in-flight ceiling that follows measured latency, by additive increase and multiplicative decrease (AIMD, as
 * TCP does with its window). Finished requests are averaged over windows, each weighted by its own latency: the
 * average is that of the slot time, Σ latency² / Σ latency, the latency the work holding the slots sees. A window
 * closes once it has at least `limit` samples (20 at least) and as much slot time as 20 requests of the previous
 * window's average. Cheap requests (404s, the 429s of a limiter mounted after the shedder) hold the slots for
 * almost nothing, so they weigh almost nothing, and a burst of them cannot close a window of its own: they cannot
 * steer the baseline down and then make ordinary requests look slow. The baseline is the lowest window average
 * seen, drifting up 1% a window so that a service that has become slower for good is learnt again. A window whose
 * average is above `tolerance` x baseline cuts the ceiling to 90%; a window that stayed within it, and in which the
 * ceiling was reached (it was the binding constraint), raises it: doubling until the first cut (slow start, so a
 * ceiling that starts low finds its level quickly), then by one. It starts at 4 (or `minInFlight` if higher), where
 * the baseline is learnt without queueing, and never exceeds `maxInFlight`.
 *
 * Trade-offs: it cannot tell a service slowed by load from one slowed by a dependency, so a slow dependency lowers
 * the ceiling too (usually what you want: fewer requests pile up on it); it needs traffic to learn, and requests
 * of very different costs mixed on one shedder make the average noisy; it holds latency near
 * `tolerance` x baseline, trading a little throughput for it.
 */
export class AdaptiveLimit {
  limit: number
  private readonly minInFlight: number
  private readonly tolerance: number
  private baselineMs = Number.POSITIVE_INFINITY
  private slowStart = true
  private samples = 0
  /** The window's slot time, Σ latency, and Σ latency². */
  private heldMs = 0
  private heldSquaredMs = 0
  /** The previous window's average: a window must hold MIN_WINDOW_SAMPLES of it in slot time. */
  private lastAverageMs = 0
  private saturated = false

  constructor(
    options: AdaptiveLimitOptions | true,
    private readonly maxInFlight: number,
  ) {
    const given = options === true ? {} : options
    checkObject(given, 'adaptive')
    checkOptionNames(given, ['minInFlight', 'tolerance'], 'adaptive', {}, 'adaptive.')
    this.minInFlight = checkWholeNumber(given.minInFlight ?? 1, 'adaptive.minInFlight')
    if (this.minInFlight > maxInFlight) {
      throw new InvalidOptionError('adaptive.minInFlight', `must not exceed maxInFlight (${maxInFlight})`)
    }
    const tolerance = given.tolerance ?? 1.5
    // Number.isFinite is false for anything but a finite number, a numeric string included.
    if (!Number.isFinite(tolerance) || tolerance < 1) {
      throw new InvalidOptionError('adaptive.tolerance', `must be a number of at least 1 (got ${describe(tolerance)})`)
    }
    this.tolerance = tolerance
    this.limit = Math.min(maxInFlight, Math.max(this.minInFlight, 4))
  }

  /** The ceiling was the binding constraint: a request had to wait or was shed for want of a slot. */
  reached(): void {
    this.saturated = true
  }

  /** A request held its slot for `latencyMs`. */
  sample(latencyMs: number): void {
    this.samples++
    this.heldMs += latencyMs
    this.heldSquaredMs += latencyMs * latencyMs
    if (this.samples < Math.max(this.limit, MIN_WINDOW_SAMPLES)) return
    // (A sum of 20 equal latencies may round a hair below 20 times one of them: that is a full window.)
    if (this.heldMs < MIN_WINDOW_SAMPLES * this.lastAverageMs * (1 - 1e-9)) return
    const averageMs = this.heldMs === 0 ? 0 : this.heldSquaredMs / this.heldMs
    this.lastAverageMs = averageMs
    // The baseline drifts up only in windows where the ceiling did not bind: a saturated window's latency includes
    // the queueing this limit exists to prevent, and learning it would ratchet the ceiling up.
    this.baselineMs = Math.min(averageMs, this.saturated ? this.baselineMs : this.baselineMs * BASELINE_DRIFT)
    if (averageMs > this.tolerance * this.baselineMs) {
      if (this.limit === this.minInFlight) {
        // Still slow at the lowest ceiling: the service itself has become slower. Learn its latency again.
        this.baselineMs = averageMs
        this.slowStart = true
      } else {
        this.limit = Math.max(this.minInFlight, Math.floor(this.limit * DECREASE))
        this.slowStart = false
      }
    } else if (this.saturated) {
      this.limit = Math.min(this.maxInFlight, this.slowStart ? this.limit * 2 : this.limit + 1)
    }
    this.samples = 0
    this.heldMs = 0
    this.heldSquaredMs = 0
    this.saturated = false
  }
}
