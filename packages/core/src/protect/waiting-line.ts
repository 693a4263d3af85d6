import { countAt, PRIORITIES } from './priority'

/** A request in the waiting line. The links are the line's own: a waiter sits in its tenant's queue. */
export interface Waiter {
  /** The priority's rank: 0 critical, 1 normal, 2 sheddable. */
  readonly rank: number
  readonly tenant: string
  readonly arrivedAt: number
  /** Arrival order, for the ties. */
  readonly seq: number
  /** The tenant queue the waiter is in; undefined when it is not in the line. */
  queue: TenantQueue | undefined
  older: Waiter | undefined
  newer: Waiter | undefined
}

/** One tenant's waiters at one priority, oldest at `head`. */
export interface TenantQueue {
  readonly tenant: string
  readonly rank: number
  /** When this queue last went from empty to holding someone: its controlled delay counts from there. */
  readonly filledAt: number
  head: Waiter | undefined
  tail: Waiter | undefined
}

/**
 * The shedder's waiting line: who starts next when a slot frees, and who is dropped when the line is full.
 *
 * - Start order: the most important priority first; within it, the tenant with the fewest requests in flight (the
 *   one furthest below its fair share, every tenant's share being equal); then arrival order (or the newest first,
 *   for adaptive LIFO).
 * - Drop order: the least important priority first; within it, the tenant with the most requests in flight and
 *   waiting (the most over its share), its newest waiter.
 *
 * Each tenant has a queue per priority, as each flow has in FQ-CoDel (RFC 8290), so a tenant that floods builds a
 * standing queue of its own while a light tenant's queue keeps emptying. Choosing a tenant scans the tenants that
 * have waiters at one priority: with no `tenant` function there is one.
 */
export class WaitingLine<W extends Waiter> {
  length = 0
  /** Waiters per priority rank. */
  readonly waitingByRank: number[] = PRIORITIES.map(() => 0)
  private readonly levels: Map<string, TenantQueue>[] = PRIORITIES.map(() => new Map())
  private readonly running = new Map<string, number>()
  private readonly waiting = new Map<string, number>()

  /** Requests of `tenant` in flight now. */
  inFlightOf(tenant: string): number {
    return this.running.get(tenant) ?? 0
  }

  /** Counts a request of `tenant` as started. */
  started(tenant: string): void {
    this.running.set(tenant, this.inFlightOf(tenant) + 1)
  }

  /** Counts a request of `tenant` as finished. */
  finished(tenant: string): void {
    const count = this.inFlightOf(tenant) - 1
    if (count > 0) this.running.set(tenant, count)
    else this.running.delete(tenant)
  }

  push(waiter: W, now: number): void {
    const level = this.levels[waiter.rank] as Map<string, TenantQueue>
    let queue = level.get(waiter.tenant)
    if (queue === undefined) {
      queue = { tenant: waiter.tenant, rank: waiter.rank, filledAt: now, head: undefined, tail: undefined }
      level.set(waiter.tenant, queue)
    }
    waiter.queue = queue
    waiter.older = queue.tail
    waiter.newer = undefined
    if (queue.tail === undefined) queue.head = waiter
    else queue.tail.newer = waiter
    queue.tail = waiter
    this.length++
    countAt(this.waitingByRank, waiter.rank, 1)
    this.waiting.set(waiter.tenant, (this.waiting.get(waiter.tenant) ?? 0) + 1)
  }

  /** Takes a waiter out of the line (started, shed or gone). Does nothing for one that is not in it. */
  remove(waiter: W): void {
    const queue = waiter.queue
    if (queue === undefined) return
    waiter.queue = undefined
    if (waiter.older === undefined) queue.head = waiter.newer
    else waiter.older.newer = waiter.newer
    if (waiter.newer === undefined) queue.tail = waiter.older
    else waiter.newer.older = waiter.older
    waiter.older = waiter.newer = undefined
    // An emptied queue is dropped: the tenant's next waiter starts a new one, and its controlled delay afresh.
    if (queue.head === undefined) this.levels[waiter.rank]?.delete(queue.tenant)
    this.length--
    countAt(this.waitingByRank, waiter.rank, -1)
    const count = (this.waiting.get(waiter.tenant) ?? 1) - 1
    if (count > 0) this.waiting.set(waiter.tenant, count)
    else this.waiting.delete(waiter.tenant)
  }

  /**
   * The queue whose waiter should start next, or undefined when the line is empty. Among tenants as far below their
   * share, the one whose oldest waiter came first.
   */
  nextQueue(): TenantQueue | undefined {
    for (const level of this.levels) {
      if (level.size === 0) continue
      let best: TenantQueue | undefined
      let bestInFlight = 0
      for (const queue of level.values()) {
        const inFlight = this.inFlightOf(queue.tenant)
        if (
          best === undefined ||
          inFlight < bestInFlight ||
          (inFlight === bestInFlight && (queue.head as Waiter).seq < (best.head as Waiter).seq)
        ) {
          best = queue
          bestInFlight = inFlight
        }
      }
      return best
    }
    return undefined
  }

  /**
   * The waiter to drop so that an arrival of priority `rank` from `tenant` can take its place in a full line: the
   * newest waiter of the most over-share tenant at the least important priority, if it matters less than the
   * arrival. At the same priority that means a tenant using at least two more places than the arrival's (with one
   * more, swapping them would only move the excess from one tenant to the other). Undefined: drop the arrival.
   */
  victimFor(rank: number, tenant: string): W | undefined {
    for (let r = this.levels.length - 1; r >= rank; r--) {
      const level = this.levels[r] as Map<string, TenantQueue>
      if (level.size === 0) continue
      let worst: TenantQueue | undefined
      let worstUsage = -1
      for (const queue of level.values()) {
        const usage = this.usageOf(queue.tenant)
        if (usage > worstUsage) {
          worst = queue
          worstUsage = usage
        }
      }
      if (r > rank || worstUsage > this.usageOf(tenant) + 1) return worst?.tail as W | undefined
      return undefined
    }
    return undefined
  }

  /** Every queue, most important priority first. */
  *queues(): IterableIterator<TenantQueue> {
    for (const level of this.levels) yield* level.values()
  }

  /** Every waiter of priority `rank` or less important. */
  atOrBelow(rank: number): W[] {
    const found: W[] = []
    for (let r = rank; r < this.levels.length; r++) {
      for (const queue of (this.levels[r] as Map<string, TenantQueue>).values()) {
        for (let w = queue.head; w !== undefined; w = w.newer) found.push(w as W)
      }
    }
    return found
  }

  private usageOf(tenant: string): number {
    return this.inFlightOf(tenant) + (this.waiting.get(tenant) ?? 0)
  }
}
