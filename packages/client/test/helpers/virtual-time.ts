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
  private readonly timers = new TimerHeap()

  /** The `sleep` to inject. It ignores the signal: politeFetch itself must stop waiting on abort. */
  readonly sleep = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      this.waits.push(ms)
      this.timers.push(this.now + ms, resolve)
      this.busy--
      this.advanceWhenIdle()
    })

  readonly clock = (): number => this.now

  /** Runs the clients together, each counted busy until it sleeps or ends. */
  async run<T>(clients: readonly (() => Promise<T>)[]): Promise<PromiseSettledResult<T>[]> {
    // All are counted busy before any starts, so that the first to sleep does not move time past the others.
    this.busy += clients.length
    return Promise.allSettled(clients.map((client) => this.track(client)))
  }

  /** Starts one more task now, from inside a running one (a client firing a request without awaiting it). */
  spawn<T>(task: () => Promise<T>): Promise<T> {
    this.busy++
    return this.track(task)
  }

  private async track<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task()
    } finally {
      this.busy--
      this.advanceWhenIdle()
    }
  }

  private advanceWhenIdle(): void {
    if (this.busy > 0) return
    const at = this.timers.earliest()
    if (at === undefined) return
    this.now = Math.max(this.now, at)
    const due = this.timers.popUntil(at)
    this.busy += due.length
    for (const wake of due) wake()
  }
}

/** A binary min-heap of wake-ups by time, then by order of arrival, so that a crowd of thousands stays fast. */
class TimerHeap {
  private readonly heap: { at: number; order: number; wake: () => void }[] = []
  private order = 0

  push(at: number, wake: () => void): void {
    const heap = this.heap
    heap.push({ at, order: this.order++, wake })
    let i = heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(i, parent)) break
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
  }

  earliest(): number | undefined {
    return this.heap[0]?.at
  }

  /** Removes and returns, in order, every wake-up due at or before `at`. */
  popUntil(at: number): (() => void)[] {
    const due: (() => void)[] = []
    while (this.heap.length > 0 && this.heap[0]!.at <= at) due.push(this.pop())
    return due
  }

  private pop(): () => void {
    const heap = this.heap
    const top = heap[0]!
    const last = heap.pop()!
    if (heap.length > 0) {
      heap[0] = last
      let i = 0
      for (;;) {
        const left = 2 * i + 1
        const right = left + 1
        let smallest = i
        if (left < heap.length && this.before(left, smallest)) smallest = left
        if (right < heap.length && this.before(right, smallest)) smallest = right
        if (smallest === i) break
        ;[heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!]
        i = smallest
      }
    }
    return top.wake
  }

  private before(a: number, b: number): boolean {
    const x = this.heap[a]!
    const y = this.heap[b]!
    return x.at < y.at || (x.at === y.at && x.order < y.order)
  }
}
