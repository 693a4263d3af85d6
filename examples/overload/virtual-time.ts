import type { Timers } from '@sluice/core'

interface Event {
  readonly at: number
  readonly seq: number
  readonly run: () => void
  cancelled: boolean
}

/**
 * Virtual time for the overload experiments: a clock that jumps from one event to the next, and timers that are
 * events. The shedder under test takes it as its `timers`, so its deadlines fire at exact virtual instants and a
 * minute of traffic runs in well under a second, the same every time. Events at the same instant run in the order
 * they were scheduled.
 */
export class VirtualTime implements Timers {
  private current = 0
  private seq = 0
  private readonly heap: Event[] = []

  now(): number {
    return this.current
  }

  setTimeout(callback: () => void, delayMs: number): Event {
    return this.at(this.current + Math.max(0, delayMs), callback)
  }

  clearTimeout(handle: unknown): void {
    ;(handle as Event).cancelled = true
  }

  /** Schedules `run` at the absolute instant `at` (never in the past). */
  at(at: number, run: () => void): Event {
    const event: Event = { at: Math.max(at, this.current), seq: this.seq++, run, cancelled: false }
    this.push(event)
    return event
  }

  /** Runs every event due until `endMs`, in order, and leaves the clock there. */
  runUntil(endMs: number): void {
    for (let event = this.due(endMs); event !== undefined; event = this.due(endMs)) event.run()
    this.current = Math.max(this.current, endMs)
  }

  /**
   * The same, for code under test that answers through promises: after each event, while `pending()` says some
   * answer is still on its way, the promise jobs run before the clock moves on.
   */
  async runUntilSettled(endMs: number, pending: () => boolean): Promise<void> {
    for (let event = this.due(endMs); event !== undefined; event = this.due(endMs)) {
      event.run()
      while (pending()) await new Promise((resolve) => setImmediate(resolve))
    }
    this.current = Math.max(this.current, endMs)
  }

  /** Takes the next live event due by `endMs` off the heap and moves the clock to it. */
  private due(endMs: number): Event | undefined {
    for (;;) {
      const next = this.heap[0]
      if (next === undefined || next.at > endMs) return undefined
      this.pop()
      if (next.cancelled) continue
      this.current = next.at
      return next
    }
  }

  private push(event: Event): void {
    const heap = this.heap
    heap.push(event)
    let i = heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!earlier(event, heap[parent] as Event)) break
      heap[i] = heap[parent] as Event
      i = parent
    }
    heap[i] = event
  }

  private pop(): void {
    const heap = this.heap
    const last = heap.pop() as Event
    if (heap.length === 0) return
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= heap.length) break
      const right = left + 1
      const child = right < heap.length && earlier(heap[right] as Event, heap[left] as Event) ? right : left
      if (!earlier(heap[child] as Event, last)) break
      heap[i] = heap[child] as Event
      i = child
    }
    heap[i] = last
  }
}

function earlier(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq)
}

/**
 * A seeded pseudo-random generator (mulberry32): the experiments draw their arrivals from it, so a run is
 * reproducible.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
