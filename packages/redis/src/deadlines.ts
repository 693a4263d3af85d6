/** What a call that has not settled yet needs for its deadline. */
interface Pending {
  readonly expiresAt: number
  readonly reject: (error: Error) => void
  settled: boolean
}

/**
 * Deadlines for calls that all wait the same `timeoutMs`. Calls start in order, so they expire in order: one timer,
 * set for the oldest call still waiting, serves them all. A timer per call (a setTimeout and a clearTimeout each)
 * was a measurable share of the store's own CPU at tens of thousands of calls per second; this sets about one per
 * `timeoutMs`. A call that has not settled by its deadline is rejected then (as late as the event loop makes any
 * timer), and its late reply or error is still absorbed.
 *
 * @example
 * const deadlines = new Deadlines(100)
 * const pong = await deadlines.run(() => client.ping()) // rejects after 100 ms without an answer
 */
export class Deadlines {
  private readonly pending: (Pending | undefined)[] = []
  private head = 0
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(private readonly timeoutMs: number) {}

  /**
   * Settles as `work` does, or rejects `timeoutMs` after this call when `work` has not settled by then. The deadline
   * starts before `work` is called: sending a command is synchronous, and while a Redis server dies a socket write
   * can block for tens of milliseconds, which must count against the timeout rather than come on top of it.
   */
  run<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const call: Pending = { expiresAt: performance.now() + this.timeoutMs, reject, settled: false }
      this.pending.push(call)
      if (this.timer === undefined) this.arm(this.timeoutMs)
      // Both handlers stay attached, so a reply or an error that arrives after the deadline is absorbed here.
      work().then(
        (value) => {
          this.settle(call)
          resolve(value)
        },
        (error: unknown) => {
          this.settle(call)
          reject(error)
        },
      )
    })
  }

  /**
   * Marks a call settled and forgets the settled calls at the head of the line. Replies on one connection come in
   * the order of the commands, so the call that settles is nearly always the head: the line holds only the calls in
   * flight, not every call of the last `timeoutMs`.
   */
  private settle(call: Pending): void {
    call.settled = true
    const { pending } = this
    if (pending[this.head] !== call) return
    do {
      pending[this.head] = undefined
      this.head++
    } while (this.head < pending.length && (pending[this.head] as Pending).settled)
    this.compact()
  }

  /** Drops the forgotten slots before the head, once they are most of the line. */
  private compact(): void {
    const { pending } = this
    if (this.head === pending.length) {
      pending.length = 0
      this.head = 0
    } else if (this.head > 1024 && this.head * 2 > pending.length) {
      pending.splice(0, this.head)
      this.head = 0
    }
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(this.expire, delayMs)
    // A deadline never keeps the process alive on its own.
    this.timer.unref()
  }

  private readonly expire = (): void => {
    this.timer = undefined
    const now = performance.now()
    const { pending } = this
    while (this.head < pending.length) {
      const call = pending[this.head] as Pending
      if (!call.settled) {
        if (call.expiresAt > now) break
        call.settled = true
        call.reject(new Error(`Redis did not answer within ${this.timeoutMs} ms`))
      }
      pending[this.head] = undefined
      this.head++
    }
    this.compact()
    if (this.head === pending.length) return
    this.arm(Math.max(1, Math.ceil((pending[this.head] as Pending).expiresAt - now)))
  }
}
