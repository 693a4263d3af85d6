// One heap measurement for part 4, in a process of its own started with --expose-gc (by memory.ts):
// `memory-child.ts <contender> <keys>`. It sends { bytesPerKey, held } to the parent over IPC.
import { type AlgorithmName, createLimiter, MemoryStore } from '@sluice/core'
import { MemoryStore as ExpressMemoryStore, type Options as ExpressRateLimitOptions } from 'express-rate-limit'
import { RateLimiterMemory } from 'rate-limiter-flexible'

const gc = (globalThis as { gc?: () => void }).gc

function heapUsed(): number {
  if (gc === undefined) throw new Error('run with --expose-gc')
  // Twice: the first collection can leave work (weak references, finalizers) for the second.
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** Makes a consumer for one contender; `held` reports how many keys it holds afterwards, as a sanity check. */
function contender(name: string, keys: number): { consume(key: string): Promise<unknown>; held(): number } {
  if (name === 'rate-limiter-flexible') {
    const limiter = new RateLimiterMemory({ points: 100, duration: 3600 })
    return { consume: (key) => limiter.consume(key), held: () => keys }
  }
  if (name === 'express-rate-limit') {
    const store = new ExpressMemoryStore()
    store.init({ windowMs: 3_600_000 } as ExpressRateLimitOptions)
    return { consume: (key) => store.increment(key), held: () => keys }
  }
  // Room for every key, so nothing is evicted; one hour, so nothing expires while the heap is measured.
  const store = new MemoryStore({ maxKeys: keys + 1000 })
  const limiter = createLimiter({ algorithm: name as AlgorithmName, limit: 100, window: '1h', store })
  return { consume: (key) => limiter.consume(key), held: () => store.size }
}

async function main(): Promise<void> {
  const [name, count] = process.argv.slice(2)
  const keys = Number(count)
  // The key strings are made before the first measurement: the caller owns them, the store only refers to them.
  const strings = Array.from({ length: keys }, (_, i) => `user:${i}`)
  const subject = contender(name as string, keys)
  const before = heapUsed()
  for (const key of strings) await subject.consume(key)
  const after = heapUsed()
  const held = subject.held()
  process.send?.({ bytesPerKey: (after - before) / keys, held, strings: strings.length })
  process.exit(0)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
