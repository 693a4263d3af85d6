// One heap measurement for the client part, in a process of its own started with --expose-gc (by client-memory.ts):
// `client-memory-child.ts <subject> <origins> <maxKeys>`. It sends { bytes, held } to the parent over IPC: the heap
// the subject grew by after one request to each origin, and how many origins it holds state for.
import { createAdaptiveThrottle, createRetryBudget } from '@sluice/client'

const gc = (globalThis as { gc?: () => void }).gc

/** The JS heap and the typed arrays' backing stores, which live outside it (the sliding counts are typed arrays). */
function memoryUsed(): number {
  if (gc === undefined) throw new Error('run with --expose-gc')
  // Twice: the first collection can leave work (weak references, finalizers) for the second.
  gc()
  gc()
  const { heapUsed, arrayBuffers } = process.memoryUsage()
  return heapUsed + arrayBuffers
}

function subject(name: string, maxKeys: number): { use(origin: string): void; held(): number } {
  // A clock that stands still: every origin is used within one window, so none is forgotten for being idle.
  const clock = () => 1_767_225_600_000
  if (name === 'retry budget') {
    const budget = createRetryBudget({ clock, maxKeys })
    return { use: (origin) => budget.recordRequest(origin), held: () => budget.size }
  }
  const throttle = createAdaptiveThrottle({ clock, maxKeys })
  return { use: (origin) => throttle.record(origin, true), held: () => throttle.size }
}

function main(): void {
  const [name, count, max] = process.argv.slice(2)
  const origins = Array.from({ length: Number(count) }, (_, i) => `https://host-${i}.example`)
  const measured = subject(name as string, Number(max))
  const before = memoryUsed()
  for (const origin of origins) measured.use(origin)
  const after = memoryUsed()
  process.send?.({ bytes: after - before, held: measured.held(), origins: origins.length })
  process.exit(0)
}

main()
