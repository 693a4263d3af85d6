/**
 * Virtual time for a crowd of clients doing real I/O. Time stands still while any client is busy (sending a
 * request, reading a response); once every client is asleep or done, it jumps to the earliest wake-up and wakes
 * everyone due then. Waits are exact and a test of minutes of waiting runs in milliseconds, deterministically.
 */
export class VirtualTime {
  now = 0
  /** Every wait asked for, in order. */
  readonly waits: number[] = []
  private busy = 0
  private timers: { at: number; wake: () => void }[] = []

  /** The `sleep` to inject. It ignores the signal: politeFetch itself must stop waiting on abort. */
  readonly sleep = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      this.waits.push(ms)
      this.timers.push({ at: this.now + ms, wake: resolve })
      this.busy--
      this.advanceWhenIdle()
    })

  readonly clock = (): number => this.now

  /** Runs the clients together, each counted busy until it sleeps or ends. */
  async run<T>(clients: readonly (() => Promise<T>)[]): Promise<PromiseSettledResult<T>[]> {
    this.busy += clients.length
    return Promise.allSettled(
      clients.map(async (client) => {
        try {
          return await client()
        } finally {
          this.busy--
          this.advanceWhenIdle()
        }
      }),
    )
  }

  private advanceWhenIdle(): void {
    if (this.busy > 0 || this.timers.length === 0) return
    const at = Math.min(...this.timers.map((timer) => timer.at))
    this.now = Math.max(this.now, at)
    const due = this.timers.filter((timer) => timer.at <= at)
    this.timers = this.timers.filter((timer) => timer.at > at)
    this.busy += due.length
    for (const timer of due) timer.wake()
  }
}
