import type { ControlledDelay } from './controlled-delay'
import { IndexedHeap } from './indexed-heap'
import { CRITICAL, countAt, PRIORITIES } from './priority'

/** A request in the waiting line. The links are the line's own: a waiter sits in its tenant's queue and in the line. */
export interface Waiter {
  /** The priority's rank: 0 critical, 1 normal, 2 sheddable. */
  readonly rank: number
  readonly tenant: string
  readonly arrivedAt: number
  /** Arrival order, for the ties. */
  readonly seq: number
  /** The tenant queue the waiter is in; undefined when it is not in the line. */
  queue: TenantQueue | undefined
  /** Its neighbours in its tenant's queue. */
  older: Waiter | undefined
  newer: Waiter | undefined
  /** Its neighbours in the whole line, in arrival order. */
  earlier: Waiter | undefined
  later: Waiter | undefined
}

/** A tenant with requests in flight or waiting; forgotten when it has neither. */
interface Tenant {
  readonly name: string
  running: number
  waiting: number
  /**
   * Its recent starts, each weighted e^(t / timeConstant) (forward decay): every tenant's weights grow at the same
   * rate, so they compare as the decayed counts would, and nothing has to be decayed as time passes.
   */
  usage: number
  /** Its queue at each priority. */
  readonly queues: (TenantQueue | undefined)[]
}

/** One tenant's waiters at one priority, oldest at `head`. */
export interface TenantQueue {
  readonly tenant: string
  readonly rank: number
  /** When this queue last went from empty to holding someone: its controlled delay counts from there. */
  readonly filledAt: number
  /** When it turns standing, if it has not emptied and its tenant is not light then. */
  standingFrom: number
  /** Whether it is a standing queue: one that has not emptied for an interval, of a tenant that is not light. */
  standing: boolean
  head: Waiter | undefined
  tail: Waiter | undefined
}

/** The line's own view of a queue: its tenant and its place in each heap. */
interface Queue extends TenantQueue {
  readonly owner: Tenant
  /** The seq of the waiter that opened it: older queues first among equals. */
  readonly openedSeq: number
  /** Due to stand, but its tenant was light then: it stands once its tenant is not light at one of its starts. */
  deferred: boolean
  startSlot: number
  dropSlot: number
  turnSlot: number
  standSlot: number
}

/** A tenant whose recent starts are below this share of the mean of the tenants in line or in flight is light. */
const LIGHT_SHARE = 0.5
/** The usage of starts decays with a time constant of this many queue intervals (1 s by default). */
const USAGE_INTERVALS = 10
/** The forward-decay weights are brought back to 1 once they reach e^this (every 32 time constants). */
const RESCALE_EXPONENT = 32

const slot = <K extends 'startSlot' | 'dropSlot' | 'turnSlot' | 'standSlot'>(key: K) => ({
  get: (queue: Queue) => queue[key],
  set: (queue: Queue, index: number) => {
    queue[key] = index
  },
})
const headOf = (queue: Queue) => queue.head as Waiter
const placesOf = (tenant: Tenant) => tenant.running + tenant.waiting

/**
 * The shedder's waiting line: who starts next when a slot frees, who is dropped when the line is full, and which
 * queues stand.
 *
 * - Start order: the most important priority first; within it, the tenant with the fewest requests in flight (the
 *   one furthest below its fair share, every tenant's share being equal); then arrival order (or the newest first,
 *   for adaptive LIFO).
 * - Drop order: the least important priority first; within it, the tenant with the most requests in flight and
 *   waiting (the most over its share), its newest waiter.
 * - Standing queues: each tenant has a queue per priority, as each flow has in FQ-CoDel (RFC 8290), so a tenant
 *   that floods builds a standing queue of its own while a light tenant's queue keeps emptying. A queue that has not
 *   emptied for an interval stands, unless its tenant is light: one whose recent starts (a count decaying over ten
 *   intervals) are below half the mean of the tenants in line or in flight. A light tenant's requests wait behind
 *   each other only because they came together (thirty small tenants firing in the same instant), not because it
 *   takes more than its share; its queue stands only once the tenant is not light at one of its own starts.
 *
 * Every choice is the top of a heap (per priority: by requests in flight, by places held; over the line: queues by
 * when they turn standing, standing queues by their oldest waiter), and the oldest waiter of all heads a list in
 * arrival order, so that admitting, starting and dropping cost O(log n) in the tenants waiting, not O(n).
 */
export class WaitingLine<W extends Waiter> {
  length = 0
  /** Waiters per priority rank. */
  readonly waitingByRank: number[] = PRIORITIES.map(() => 0)
  private readonly tenants = new Map<string, Tenant>()
  /** The sum of the tenants' usage (at the current scale). */
  private activeUsage = 0
  private usageEpoch = 0
  private readonly usageTimeConstantMs: number
  private oldestWaiter: W | undefined
  private newestWaiter: W | undefined
  /** Per priority: the queue to start from next on top. */
  private readonly toStart = PRIORITIES.map(
    () =>
      new IndexedHeap<Queue>(
        (a, b) =>
          a.owner.running < b.owner.running || (a.owner.running === b.owner.running && headOf(a).seq < headOf(b).seq),
        slot('startSlot'),
      ),
  )
  /** Per priority: the queue of the tenant holding the most places on top. */
  private readonly toDrop = PRIORITIES.map(
    () =>
      new IndexedHeap<Queue>((a, b) => {
        const places = placesOf(a.owner) - placesOf(b.owner)
        return places > 0 || (places === 0 && a.openedSeq < b.openedSeq)
      }, slot('dropSlot')),
  )
  /** Queues that are not standing yet (critical ones never are), the first to turn on top. */
  private readonly turning = new IndexedHeap<Queue>(
    (a, b) => a.standingFrom < b.standingFrom || (a.standingFrom === b.standingFrom && a.openedSeq < b.openedSeq),
    slot('turnSlot'),
  )
  /** Standing queues, the one with the oldest head on top: its head is the first to reach the short bound. */
  private readonly standingQueues = new IndexedHeap<Queue>(
    (a, b) =>
      headOf(a).arrivedAt < headOf(b).arrivedAt ||
      (headOf(a).arrivedAt === headOf(b).arrivedAt && headOf(a).seq < headOf(b).seq),
    slot('standSlot'),
  )

  constructor(private readonly delay: ControlledDelay) {
    this.usageTimeConstantMs = USAGE_INTERVALS * delay.intervalMs
  }

  /** Requests of `tenant` in flight now. */
  inFlightOf(tenant: string): number {
    return this.tenants.get(tenant)?.running ?? 0
  }

  /** Counts a request of `tenant` as started at `now`. */
  started(name: string, now: number): void {
    const tenant = this.tenantOf(name)
    tenant.running++
    const weight = this.weightAt(now)
    tenant.usage += weight
    this.activeUsage += weight
    this.reorder(tenant)
    if (this.light(tenant)) return
    for (const queue of tenant.queues as (Queue | undefined)[]) if (queue?.deferred === true) this.stand(queue)
  }

  /** Counts a request of `tenant` as finished. */
  finished(name: string): void {
    const tenant = this.tenants.get(name)
    if (tenant === undefined) return
    tenant.running--
    this.reorder(tenant)
    this.forgetIfIdle(tenant)
  }

  push(waiter: W, now: number): void {
    const tenant = this.tenantOf(waiter.tenant)
    let queue = tenant.queues[waiter.rank] as Queue | undefined
    if (queue === undefined) {
      queue = {
        tenant: tenant.name,
        owner: tenant,
        rank: waiter.rank,
        filledAt: now,
        standingFrom: now + this.delay.intervalMs,
        standing: false,
        head: undefined,
        tail: undefined,
        openedSeq: waiter.seq,
        deferred: false,
        startSlot: -1,
        dropSlot: -1,
        turnSlot: -1,
        standSlot: -1,
      }
      tenant.queues[waiter.rank] = queue
    }
    waiter.queue = queue
    waiter.older = queue.tail
    waiter.newer = undefined
    if (queue.tail === undefined) queue.head = waiter
    else queue.tail.newer = waiter
    queue.tail = waiter
    waiter.earlier = this.newestWaiter
    waiter.later = undefined
    if (this.newestWaiter === undefined) this.oldestWaiter = waiter
    else this.newestWaiter.later = waiter
    this.newestWaiter = waiter
    this.length++
    countAt(this.waitingByRank, waiter.rank, 1)
    tenant.waiting++
    if (queue.head === waiter) {
      ;(this.toStart[queue.rank] as IndexedHeap<Queue>).push(queue)
      if (queue.rank !== CRITICAL) this.turning.push(queue)
    }
    this.reorder(tenant)
  }

  /** Takes a waiter out of the line (started, shed or gone). Does nothing for one that is not in it. */
  remove(waiter: W): void {
    const queue = waiter.queue as Queue | undefined
    if (queue === undefined) return
    waiter.queue = undefined
    const wasHead = queue.head === waiter
    if (waiter.older === undefined) queue.head = waiter.newer
    else waiter.older.newer = waiter.newer
    if (waiter.newer === undefined) queue.tail = waiter.older
    else waiter.newer.older = waiter.older
    waiter.older = waiter.newer = undefined
    if (waiter.earlier === undefined) this.oldestWaiter = waiter.later as W | undefined
    else waiter.earlier.later = waiter.later
    if (waiter.later === undefined) this.newestWaiter = waiter.earlier as W | undefined
    else waiter.later.earlier = waiter.earlier
    waiter.earlier = waiter.later = undefined
    this.length--
    countAt(this.waitingByRank, waiter.rank, -1)
    const tenant = queue.owner
    tenant.waiting--
    if (queue.head === undefined) {
      // An emptied queue is dropped: the tenant's next waiter starts a new one, and its controlled delay afresh.
      tenant.queues[queue.rank] = undefined
      ;(this.toStart[queue.rank] as IndexedHeap<Queue>).remove(queue)
      ;(this.toDrop[queue.rank] as IndexedHeap<Queue>).remove(queue)
      this.turning.remove(queue)
      this.standingQueues.remove(queue)
    } else if (wasHead) {
      ;(this.toStart[queue.rank] as IndexedHeap<Queue>).update(queue)
      if (queue.standing) this.standingQueues.update(queue)
    }
    this.reorder(tenant)
    this.forgetIfIdle(tenant)
  }

  /** The oldest waiter of all, the first to reach `maxWait`. */
  oldest(): W | undefined {
    return this.oldestWaiter
  }

  /** The standing queue whose head waited longest, the first to reach the standing-queue bound. */
  oldestStanding(): TenantQueue | undefined {
    return this.standingQueues.peek()
  }

  /** When the next queue turns standing (or is looked at again, for a light tenant); Infinity if none will. */
  nextTurn(): number {
    return this.turning.peek()?.standingFrom ?? Number.POSITIVE_INFINITY
  }

  /**
   * Turns the queues due by `now` standing, but those of light tenants: such a queue is looked at again when its
   * tenant next starts a request (its usage grows only then), not on a timer, so light tenants cost nothing while
   * they wait.
   */
  turnStanding(now: number): void {
    for (
      let queue = this.turning.peek();
      queue !== undefined && queue.standingFrom <= now;
      queue = this.turning.peek()
    ) {
      this.turning.remove(queue)
      if (this.light(queue.owner)) queue.deferred = true
      else this.stand(queue)
    }
  }

  /**
   * The queue whose waiter should start next, or undefined when the line is empty. Among tenants as far below their
   * share, the one whose oldest waiter came first.
   */
  nextQueue(): TenantQueue | undefined {
    for (const heap of this.toStart) {
      const queue = heap.peek()
      if (queue !== undefined) return queue
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
    for (let r = this.toDrop.length - 1; r >= rank; r--) {
      const worst = (this.toDrop[r] as IndexedHeap<Queue>).peek()
      if (worst === undefined) continue
      const arrival = this.tenants.get(tenant)
      if (r > rank || placesOf(worst.owner) > (arrival === undefined ? 0 : placesOf(arrival)) + 1) {
        return worst.tail as W
      }
      return undefined
    }
    return undefined
  }

  /** Every waiter of priority `rank` or less important. */
  atOrBelow(rank: number): W[] {
    const found: W[] = []
    for (let r = rank; r < this.toStart.length; r++) {
      for (const queue of (this.toStart[r] as IndexedHeap<Queue>).values()) {
        for (let w = queue.head; w !== undefined; w = w.newer) found.push(w as W)
      }
    }
    return found
  }

  private stand(queue: Queue): void {
    queue.deferred = false
    queue.standing = true
    this.standingQueues.push(queue)
  }

  /** Whether a tenant's recent starts are below half the mean of the tenants in line or in flight. */
  private light(tenant: Tenant): boolean {
    return tenant.usage * this.tenants.size < LIGHT_SHARE * this.activeUsage
  }

  /** The weight of a start at `now`, e^((now - epoch) / timeConstant), rescaling every usage when it grows large. */
  private weightAt(now: number): number {
    let exponent = (now - this.usageEpoch) / this.usageTimeConstantMs
    if (exponent > RESCALE_EXPONENT) {
      const factor = Math.exp(-exponent)
      for (const tenant of this.tenants.values()) tenant.usage *= factor
      this.activeUsage *= factor
      this.usageEpoch = now
      exponent = 0
    }
    return Math.exp(exponent)
  }

  private tenantOf(name: string): Tenant {
    let tenant = this.tenants.get(name)
    if (tenant === undefined) {
      tenant = { name, running: 0, waiting: 0, usage: 0, queues: PRIORITIES.map(() => undefined) }
      this.tenants.set(name, tenant)
    }
    return tenant
  }

  /** A tenant's counts changed: its queues move in the start and drop orders. */
  private reorder(tenant: Tenant): void {
    for (const queue of tenant.queues as (Queue | undefined)[]) {
      if (queue === undefined) continue
      ;(this.toStart[queue.rank] as IndexedHeap<Queue>).update(queue)
      ;(this.toDrop[queue.rank] as IndexedHeap<Queue>).update(queue)
    }
  }

  private forgetIfIdle(tenant: Tenant): void {
    if (placesOf(tenant) > 0) return
    this.tenants.delete(tenant.name)
    // With nobody left the sum is exactly 0, whatever rounding the additions and subtractions left in it.
    this.activeUsage = this.tenants.size === 0 ? 0 : this.activeUsage - tenant.usage
  }
}
