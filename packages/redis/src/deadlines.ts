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
          call.settled = true
          resolve(value)
        },
        (error: unknown) => {
          call.settled = true
          reject(error)
        },
      )
    })
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
    if (this.head === pending.length) {
      pending.length = 0
      this.head = 0
      return
    }
    if (this.head > 1024 && this.head * 2 > pending.length) {
      pending.splice(0, this.head)
      this.head = 0
    }
    this.arm(Math.max(1, Math.ceil((pending[this.head] as Pending).expiresAt - now)))
  }
}
