import { idleMs } from './idle-time'

/**
 * A call given up by its deadline. `reach` says what it tells about Redis: `'node'`, the connection went silent (or
 * answered too slowly for too long); `'slot'`, later calls were answered and this one was not, so the client is
 * retrying or redirecting it on its own (a slot being migrated, a cluster being reconfigured).
 */
export class CallExpired extends Error {
  override readonly name = 'CallExpired'
  constructor(
    message: string,
    readonly reach: 'slot' | 'node',
  ) {
    super(message)
  }
}

/** The stores' `timeout` when none is given, in ms. */
export const DEFAULT_TIMEOUT_MS = 100

/** No call waits longer than this many timeouts of this instance's idle time, however steadily Redis answers others. */
export const BACKSTOP_TIMEOUTS = 30

/** What a call that has not settled yet needs for its deadline. */
interface Waiting {
  /** The order in which calls were sent on this connection. */
  readonly seq: number
  /** When the call was sent, on the clock that counts silence by the wall clock (see `Deadlines.awake`). */
  readonly sentAt: number
  /** This instance's idle time when the call was sent. */
  readonly idleAtSend: number
  /** This instance's idle time when the call was first sent: the backstop counts its whole wait, resends included. */
  readonly idleAtFirstSend: number
  readonly reject: (error: Error) => void
  settled: boolean
}

/** How long calls on one connection may wait. */
export interface DeadlineOptions {
  /** How long the connection may stay silent, while this instance is free to read, before a call is given up. */
  readonly timeoutMs: number
  /**
   * The longest any call may wait, counted as `timeoutMs` is, however steadily other calls are answered; and the
   * longest a connection may stay silent by the clock, however busy this instance was meanwhile.
   */
  readonly backstopMs: number
  /** Tests: the idle-time clock (see `idle-time.ts`). */
  readonly idleMs?: () => number
  /** Tests: the monotonic clock, in ms (performance.now()). */
  readonly nowMs?: () => number
}

/**
 * The deadlines of the calls on one connection to Redis (one node of a Cluster). They measure Redis, not this
 * instance:
 *
 * - Waits are counted in this instance's idle time: the time it sat waiting for I/O, free to read a reply (Node's event
 *   loop idle time). Time the instance spends running code (a burst being dispatched, a long handler, a GC pause, the
 *   machine giving its CPU to other processes) does not count.
 * - Redis answers a connection in the order of its commands. While replies keep arriving, the oldest call waiting is
 *   next: a backlog this instance created (a burst) is a queue, not an outage. So the oldest call's wait counts from
 *   the later of its send and the last reply on the connection, and only that call's wait matters.
 * - A deadline is examined in the check phase of the event loop, after the poll phase has read every reply that has
 *   arrived: a reply that arrived while the instance was busy is used, however late it is read. (A timer fires before
 *   the poll phase of its turn, so it only schedules that.)
 * - A call that later calls overtook is being retried or redirected by the client: the replies to the others say
 *   nothing about it, so its wait counts from when it was overtaken, and its expiry concerns it alone (`'slot'`).
 * - Backstops, at `backstopMs`: no call waits longer than that in idle time, however steadily other calls
 *   are answered, so no request hangs on a Redis that answers too slowly ever to catch up; and no connection stays
 *   silent that long by the wall clock, so an instance too busy ever to be idle still notices a hung Redis. That clock
 *   leaves out the time the event loop was held past the deadline timer (a burst dispatched in one synchronous run, a
 *   long handler): while it is held, this instance cannot read a reply, and a client that writes in a later phase
 *   (node-redis writes in setImmediate) has not even sent the call. A silence is counted from the loop's next turn.
 *
 * One timer serves every call of the connection, armed for the oldest one; settling a call is O(1).
 *
 * @example
 * const deadlines = new Deadlines({ timeoutMs: 100, backstopMs: 3000 })
 * const pong = await deadlines.run(() => client.ping()) // rejects with CallExpired when Redis stays silent
 */
export class Deadlines {
  private readonly line: (Waiting | undefined)[] = []
  private head = 0
  private sent = 0
  /** The order of the newest call that has settled: an older call still waiting was overtaken. */
  private newestSettled = -1
  /** When a reply last arrived on this connection: performance.now() and this instance's idle time. */
  private lastReplyAt = Number.NEGATIVE_INFINITY
  private lastReplyIdle = Number.NEGATIVE_INFINITY
  /** Since when the call at the head of the line has been overtaken by a later one (both clocks). */
  private overtakenAt: number | undefined
  private overtakenIdle = 0
  private scheduled = false
  /** When the armed timer is due (performance.now()). */
  private dueAt = 0
  /** How long, in all, the event loop was held over a timeout past the timer's due time: nothing was read meanwhile. */
  private heldMs = 0
  private readonly idle: () => number
  private readonly now: () => number

  constructor(private readonly options: DeadlineOptions) {
    this.idle = options.idleMs ?? idleMs
    this.now = options.nowMs ?? (() => performance.now())
  }

  /**
   * Settles as `work` does, unless its deadline passes first. `work` gets `resent`, to call when it sends the call
   * again on the connection (after NOSCRIPT, the script itself; after SLUICELATE, with a new deadline): Redis replied,
   * and the call's reply now comes after those of the commands sent before it again, so it takes its place at the back
   * of the line. `resent` answers whether the call is still waited for: false once it was given up.
   */
  run<T>(work: (resent: () => boolean) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let call = this.enqueue(reject, this.idle())
      if (!this.scheduled) this.arm(this.options.timeoutMs)
      let answer: Promise<T>
      try {
        answer = work(() => {
          call = this.resend(call)
          return !call.settled
        })
      } catch (error) {
        answer = Promise.reject(error)
      }
      // Both handlers stay attached, so a reply or an error that arrives after the deadline is absorbed here.
      answer.then(
        (value) => {
          if (this.settle(call)) resolve(value)
        },
        (error: unknown) => {
          if (this.settle(call)) reject(error)
        },
      )
    })
  }

  /** Gives up every call still waiting, with `error`: the connection they wait on has been declared down. */
  failAll(error: Error): void {
    const { line } = this
    for (let i = this.head; i < line.length; i++) {
      const call = line[i]
      if (call !== undefined && !call.settled) {
        call.settled = true
        call.reject(error)
      }
    }
    line.length = 0
    this.head = 0
    this.overtakenAt = undefined
  }

  private enqueue(reject: (error: Error) => void, idleAtFirstSend: number): Waiting {
    const call: Waiting = {
      seq: this.sent++,
      sentAt: this.awake(),
      idleAtSend: this.idle(),
      idleAtFirstSend,
      reject,
      settled: false,
    }
    this.line.push(call)
    return call
  }

  /** The wall clock less the time the event loop was held: the clock a silence by the wall clock is counted on. */
  private awake(): number {
    return this.now() - this.heldMs
  }

  private replied(): void {
    this.lastReplyAt = this.awake()
    this.lastReplyIdle = this.idle()
  }

  /** A call sent again: its place in the line is left (without counting as answered), and it queues anew. */
  private resend(call: Waiting): Waiting {
    this.replied()
    if (call.settled) return call // given up already: the resend's reply is only absorbed
    call.settled = true
    if (this.line[this.head] === call) this.pop()
    return this.enqueue(call.reject, call.idleAtFirstSend)
  }

  /** Takes in a call's reply or error; answers whether the call was still waiting for it. */
  private settle(call: Waiting): boolean {
    // Even a reply to a call given up on shows that the connection answers.
    this.replied()
    if (call.settled) return false
    call.settled = true
    if (call.seq > this.newestSettled) this.newestSettled = call.seq
    if (this.line[this.head] === call) this.pop()
    else if (this.overtakenAt === undefined) this.overtaken()
    return true
  }

  private overtaken(): void {
    this.overtakenAt = this.lastReplyAt
    this.overtakenIdle = this.lastReplyIdle
  }

  /** Forgets the head of the line and the settled calls behind it. */
  private pop(): void {
    const { line } = this
    do {
      line[this.head] = undefined
      this.head++
    } while (this.head < line.length && (line[this.head] as Waiting).settled)
    const next = line[this.head]
    this.overtakenAt = undefined
    if (next !== undefined && next.seq < this.newestSettled) this.overtaken()
    if (this.head === line.length) {
      line.length = 0
      this.head = 0
    } else if (this.head > 1024 && this.head * 2 > line.length) {
      line.splice(0, this.head)
      this.head = 0
    }
  }

  private arm(delayMs: number): void {
    this.scheduled = true
    this.dueAt = this.now() + delayMs
    // A deadline never keeps the process alive on its own.
    setTimeout(this.wake, delayMs).unref()
  }

  // Timers run before the poll phase of their turn, the check phase after it.
  private readonly wake = (): void => {
    setImmediate(this.examine)
  }

  private readonly examine = (): void => {
    this.scheduled = false
    // Examined over a timeout later than due: the event loop was held (a timer fired late, or a long run in the poll
    // phase came before this check, or the process got no CPU). Meanwhile this instance could not read a reply, nor a
    // client write a call, which says nothing about Redis. A hung Redis is still noticed: it stays silent on the turns
    // after. The ordinary lateness of a busy loop (its turns shorter than a timeout) is left in: an instance that is
    // never idle notices a silent Redis by the clock as before.
    const lateMs = this.now() - this.dueAt
    if (lateMs > this.options.timeoutMs) this.heldMs += lateMs
    const { timeoutMs, backstopMs } = this.options
    while (this.head < this.line.length) {
      const call = this.line[this.head] as Waiting
      const now = this.awake()
      const idle = this.idle()
      // Silent since the call was sent, or since the last reply (or, for a call overtaken, since it was overtaken).
      const overtaken = this.overtakenAt !== undefined
      const silentMs = idle - Math.max(call.idleAtSend, overtaken ? this.overtakenIdle : this.lastReplyIdle)
      const silentWallMs = now - Math.max(call.sentAt, overtaken ? (this.overtakenAt as number) : this.lastReplyAt)
      const waitedMs = idle - call.idleAtFirstSend
      const leftMs = Math.min(timeoutMs - silentMs, backstopMs - silentWallMs, backstopMs - waitedMs)
      if (leftMs > 0) {
        // Idle time runs no faster than the wall clock: the timer is never late for it, at worst early.
        this.arm(Math.max(1, Math.ceil(leftMs)))
        return
      }
      call.settled = true
      if (waitedMs >= backstopMs) {
        call.reject(new CallExpired(`Redis took over ${backstopMs} ms to answer while answering other calls`, 'node'))
      } else if (overtaken) {
        call.reject(new CallExpired(`Redis answered later calls but not this one within ${timeoutMs} ms`, 'slot'))
      } else if (silentMs >= timeoutMs) {
        call.reject(new CallExpired(`Redis did not answer within ${timeoutMs} ms`, 'node'))
      } else {
        const busy = `Redis did not answer within ${backstopMs} ms, while this instance was too busy to be idle`
        call.reject(new CallExpired(busy, 'node'))
      }
      this.pop()
    }
  }
}
