import type { AdaptiveLimit } from './adaptive-limit'
import type { ControlledDelay } from './controlled-delay'
import type { EventLoopDelay } from './event-loop-delay'
import { CRITICAL, countAt, PRIORITIES, type Priority, rankOf } from './priority'
import { NextTimer, type Timers } from './timers'
import { type TenantQueue, type Waiter, WaitingLine } from './waiting-line'

/**
 * Why a request was shed:
 * - `'overloaded'`: every slot is taken and the line is full (or there is none);
 * - `'evicted'`: it was waiting, and a more important request (or one of a tenant further below its share) took its
 *   place in the full line;
 * - `'deadline'`: it waited `maxWait` without a slot;
 * - `'standing-queue'`: it waited longer than the standing-queue bound;
 * - `'event-loop'`: the event loop lags more than `maxEventLoopDelay`.
 *
 * @example
 * if (ticket.state === 'shed' && ticket.reason === 'deadline') metrics.increment('shed.deadline')
 */
export type ShedReason = 'overloaded' | 'evicted' | 'deadline' | 'standing-queue' | 'event-loop'

/**
 * What one request asks of the shedder.
 *
 * @example
 * shedder.admit({ priority: 'sheddable', tenant: 'acme' })
 */
export interface AdmissionRequest {
  /** Default `'normal'`. */
  priority?: Priority
  /** Who the request is for; tenants share the slots fairly. Default: one tenant for all. */
  tenant?: string
}

/**
 * One request's place: running, waiting for a slot, or shed. `release()` ends it either way, once.
 *
 * @example
 * const ticket = shedder.admit({ priority: 'normal' })
 * if (ticket.state === 'waiting') await ticket.decided()
 * if (ticket.state === 'running') try { await work() } finally { ticket.release() }
 */
export interface Ticket {
  readonly state: 'running' | 'waiting' | 'shed' | 'released'
  readonly priority: Priority
  readonly tenant: string
  /** Why it was shed (state `'shed'` only). */
  readonly reason: ShedReason | undefined
  /** How long a shed request should wait before trying again, in ms. */
  readonly retryAfterMs: number
  /** How long it waited in line, in ms (0 if it started at once). */
  readonly waitedMs: number
  /** Resolves once the request is no longer waiting (at once if it never was): started, shed or released. */
  decided(): Promise<Ticket>
  /**
   * Frees its slot (running), or leaves the line (waiting, for example because the client went away). Idempotent:
   * only the first call counts.
   */
  release(): void
}

/**
 * The load shedder of one instance: an in-flight ceiling, a bounded waiting line with deadlines, priorities, fair
 * shares among tenants, controlled delay and (optionally) the event-loop delay. The adapters' `shedLoad` calls it.
 *
 * @example
 * const shedder = createShedder({ maxInFlight: 64 })
 * const ticket = shedder.admit({ priority: 'critical' })
 */
export interface Shedder {
  /**
   * Decides at once (running or shed), or puts the request in line; `onDecided` hears when a waiter leaves it:
   * started (`'running'`), shed, or released while waiting (`'released'`).
   */
  admit(request?: AdmissionRequest, onDecided?: (ticket: Ticket) => void): Ticket
  /** Requests running now. */
  readonly inFlight: number
  /** Requests waiting now. */
  readonly waiting: number
  /** The ceiling now: `maxInFlight`, or the adaptive ceiling. */
  readonly limit: number
}

// The mean hold time weighs each new request by this (about the last 32 count).
const HOLD_WEIGHT = 1 / 32

/** The settled configuration of a shedder, built once by `createShedder`. */
export interface ShedderSettings {
  readonly maxInFlight: number
  readonly queue: number
  readonly maxWaitMs: number
  readonly delay: ControlledDelay
  readonly newestFirst: boolean
  readonly retryAfterMs: number
  readonly timers: Timers
  readonly adaptive: AdaptiveLimit | undefined
  readonly lag: { readonly signal: EventLoopDelay; readonly maxMs: number } | undefined
}

class ShedTicket implements Ticket, Waiter {
  state: Ticket['state'] = 'waiting'
  reason: ShedReason | undefined = undefined
  retryAfterMs = 0
  waitedMs = 0
  startedAt = 0
  queue: TenantQueue | undefined = undefined
  older: Waiter | undefined = undefined
  newer: Waiter | undefined = undefined
  earlier: Waiter | undefined = undefined
  later: Waiter | undefined = undefined

  constructor(
    private readonly shedder: ShedderCore,
    readonly rank: number,
    readonly tenant: string,
    readonly arrivedAt: number,
    readonly seq: number,
    public onDecided: ((ticket: Ticket) => void) | undefined,
  ) {}

  get priority(): Priority {
    return PRIORITIES[this.rank] as Priority
  }

  decided(): Promise<Ticket> {
    if (this.state !== 'waiting') return Promise.resolve(this)
    return new Promise((resolve) => {
      const previous = this.onDecided
      this.onDecided = (ticket) => {
        previous?.(ticket)
        resolve(ticket)
      }
    })
  }

  release(): void {
    this.shedder.release(this)
  }
}

/** The shedder itself; see `createShedder` for what it does, and each method for how. */
export class ShedderCore implements Shedder {
  private readonly line: WaitingLine<ShedTicket>
  private readonly timer: NextTimer
  private readonly runningByRank: number[] = PRIORITIES.map(() => 0)
  /** When a request of each priority was last shed: less important work is refused for an interval after. */
  private readonly shedAt: number[] = PRIORITIES.map(() => Number.NEGATIVE_INFINITY)
  private running = 0
  private seq = 0
  private meanHoldMs = 0
  private filling = false
  private refill = false

  constructor(private readonly settings: ShedderSettings) {
    this.line = new WaitingLine(settings.delay)
    this.timer = new NextTimer(settings.timers, () => this.fill())
  }

  get inFlight(): number {
    return this.running
  }

  get waiting(): number {
    return this.line.length
  }

  get limit(): number {
    return this.settings.adaptive?.limit ?? this.settings.maxInFlight
  }

  admit(request: AdmissionRequest = {}, onDecided?: (ticket: Ticket) => void): ShedTicket {
    const { lag, timers } = this.settings
    const rank = rankOf(request.priority ?? 'normal')
    const now = timers.now()
    const ticket = new ShedTicket(this, rank, request.tenant ?? '', now, this.seq++, onDecided)
    if (rank !== CRITICAL && lag !== undefined && lag.signal.read(now) > lag.maxMs) {
      return this.shed(ticket, 'event-loop', now)
    }
    if (this.outranked(rank, now)) return this.shed(ticket, 'overloaded', now)
    if (this.running < this.limit && this.line.length === 0) {
      this.start(ticket, now)
      return ticket
    }
    this.settings.adaptive?.reached()
    if (!this.makeRoom(ticket, now)) return this.shed(ticket, 'overloaded', now)
    this.line.push(ticket, now)
    this.fill()
    return ticket
  }

  release(ticket: ShedTicket): void {
    if (ticket.state === 'waiting') {
      ticket.state = 'released'
      this.line.remove(ticket)
      ticket.onDecided?.(ticket)
      this.fill()
    } else if (ticket.state === 'running') {
      ticket.state = 'released'
      const heldMs = this.settings.timers.now() - ticket.startedAt
      this.meanHoldMs = this.meanHoldMs === 0 ? heldMs : this.meanHoldMs + (heldMs - this.meanHoldMs) * HOLD_WEIGHT
      this.settings.adaptive?.sample(heldMs)
      this.running--
      countAt(this.runningByRank, ticket.rank, -1)
      this.line.finished(ticket.tenant)
      // Nobody waits: nothing can expire or start, and the deadline timer is already off. The common case.
      if (this.line.length > 0) this.fill()
    }
  }

  /**
   * Whether a more important priority was shed within the last interval: while it is, less important work is
   * neither started nor queued, so that no normal request is shed while a sheddable one gets a slot.
   */
  private outranked(rank: number, now: number): boolean {
    for (let r = 0; r < rank; r++) if (now < (this.shedAt[r] as number) + this.settings.delay.intervalMs) return true
    return false
  }

  /** Whether the arrival may wait: room in the line, or a less important waiter to drop for it. */
  private makeRoom(ticket: ShedTicket, now: number): boolean {
    const { queue } = this.settings
    if (this.line.length < queue) return true
    const victim = this.line.victimFor(ticket.rank, ticket.tenant)
    if (victim !== undefined) {
      this.shed(victim, 'evicted', now)
      return true
    }
    // Critical work is never shed while less important work runs: it waits for those slots, beyond the line.
    const runningBelow = this.running - (this.runningByRank[CRITICAL] as number)
    return ticket.rank === CRITICAL && (this.line.waitingByRank[CRITICAL] as number) < queue + runningBelow
  }

  /** Sheds expired waiters, starts waiters while there are slots, and sets the timer for the next deadline. */
  private fill(): void {
    // A waiter's callback may release or admit: that asks for another round, not a nested one.
    if (this.filling) {
      this.refill = true
      return
    }
    this.filling = true
    try {
      do {
        this.refill = false
        const now = this.settings.timers.now()
        this.expire(now)
        while (this.running < this.limit && this.line.length > 0) {
          const queue = this.line.nextQueue() as TenantQueue
          if (this.outranked(queue.rank, now)) {
            for (const waiter of this.line.atOrBelow(queue.rank)) this.shed(waiter, 'overloaded', now)
            continue
          }
          const lifo = this.settings.newestFirst && queue.standing
          const next = (lifo ? queue.tail : queue.head) as ShedTicket
          this.line.remove(next)
          this.start(next, now)
          next.onDecided?.(next)
        }
      } while (this.refill)
      this.timer.schedule(this.nextDeadline())
    } finally {
      this.filling = false
    }
  }

  /**
   * Sheds every waiter past its deadline, and with it every less important waiter (it would wait longer still): the
   * oldest waiter of all against `maxWait`, the oldest head of a standing queue against the standing-queue bound.
   * Deadlines are compared as the sums the timer was set for (arrival + bound), so the two agree to the last bit.
   */
  private expire(now: number): void {
    const { maxWaitMs } = this.settings
    this.line.turnStanding(now)
    const shortMs = this.shortWaitMs()
    for (;;) {
      const oldest = this.line.oldest()
      const standing = this.line.oldestStanding()?.head as ShedTicket | undefined
      let head: ShedTicket
      if (oldest !== undefined && now >= oldest.arrivedAt + maxWaitMs) head = oldest
      else if (standing !== undefined && now >= standing.arrivedAt + shortMs) head = standing
      else return
      const reason = now >= head.arrivedAt + maxWaitMs ? 'deadline' : 'standing-queue'
      for (const below of this.line.atOrBelow(head.rank + 1)) this.shed(below, reason, now)
      this.shed(head, reason, now)
    }
  }

  /** The next instant a waiter expires, or a queue turns standing and shortens its waits. */
  private nextDeadline(): number {
    const oldest = this.line.oldest()
    const standing = this.line.oldestStanding()?.head
    return Math.min(
      oldest === undefined ? Number.POSITIVE_INFINITY : oldest.arrivedAt + this.settings.maxWaitMs,
      standing === undefined ? Number.POSITIVE_INFINITY : standing.arrivedAt + this.shortWaitMs(),
      this.line.nextTurn(),
    )
  }

  /** How long the waiters of a standing queue may wait now. */
  private shortWaitMs(): number {
    const { maxWaitMs, delay } = this.settings
    return Math.min(maxWaitMs, delay.boundMs(this.meanHoldMs, this.limit, maxWaitMs))
  }

  private start(ticket: ShedTicket, now: number): void {
    ticket.state = 'running'
    ticket.startedAt = now
    ticket.waitedMs = now - ticket.arrivedAt
    this.running++
    countAt(this.runningByRank, ticket.rank, 1)
    this.line.started(ticket.tenant, now)
  }

  private shed(ticket: ShedTicket, reason: ShedReason, now: number): ShedTicket {
    const waited = ticket.queue !== undefined
    if (waited) this.line.remove(ticket)
    ticket.state = 'shed'
    ticket.reason = reason
    ticket.retryAfterMs = this.settings.retryAfterMs
    ticket.waitedMs = now - ticket.arrivedAt
    this.shedAt[ticket.rank] = now
    if (waited) ticket.onDecided?.(ticket)
    return ticket
  }
}
