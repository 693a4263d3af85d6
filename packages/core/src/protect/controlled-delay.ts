/**
 * Controlled delay for the waiting line, after CoDel (Nichols and Jacobson, "Controlling Queue Delay", 2012) in the
 * form Facebook's "Fail at Scale" (2015) gives it for request queues: a queue that empties now and then is
 * absorbing bursts, and may hold a request for the full `maxWait`; a queue that has not emptied for `intervalMs` is
 * a standing queue, where waiting only adds latency, and there a request may wait `targetMs` at most. As in
 * FQ-CoDel (RFC 8290), each tenant's queue (per priority) is judged on its own, so a flood builds a standing queue
 * for the tenant that floods, not for the light tenants beside it (the waiting line says which queues stand).
 * Critical requests always get `maxWait`.
 *
 * The short bound never goes below two average gaps between slot releases (the hold time of a request divided by
 * the slots): the waiter at the head of a queue needs about one gap to reach a slot, so a shorter bound would shed
 * the very requests that keep the slots busy. Before any request has finished, that gap is unknown and the bound
 * stays `maxWait`. For a service of 64 slots at 20 ms that floor is under a millisecond
 * and `targetMs` rules; for one of 10 slots at 100 ms it is 20 ms.
 */
export class ControlledDelay {
  constructor(
    readonly targetMs: number,
    readonly intervalMs: number,
  ) {}

  /**
   * The longest a request may wait in a standing queue, given the mean hold time and the slots. Until a first
   * request has finished (`meanHoldMs` 0) the gap between releases is unknown, and a line that has not emptied may
   * be a slow first batch as well as a standing queue: then the bound is `maxWaitMs`.
   */
  boundMs(meanHoldMs: number, slots: number, maxWaitMs: number): number {
    if (meanHoldMs === 0) return maxWaitMs
    return Math.max(this.targetMs, (2 * meanHoldMs) / Math.max(1, slots))
  }
}
