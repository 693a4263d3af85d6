// One process of the core part's mixes (forked by core-mix.ts): `core-mix-child.ts <algorithms> <ms> <rounds> <warmup>`.
// It runs Sluice with only the given algorithms (comma-separated) beside rate-limiter-flexible, in two shapes (every
// call awaited in turn, and 1,000 calls in flight), over 10 000 keys, and sends each contender's rounds to the parent.
// A process of its own per mix: what V8 optimizes depends on everything the process has run.
import { type AlgorithmName, createLimiter, MemoryStore } from '@sluice/core'
import { RateLimiterMemory } from 'rate-limiter-flexible'
import { alternate, type Contender, concurrentOpsPerSecond, opsPerSecond } from './harness'

export const SHAPES = ['sequential', '1000 in flight'] as const
export type Shape = (typeof SHAPES)[number]

const KEYS = 10_000
const LIMIT = 1_000_000
const WINDOW_MS = 86_400_000
const IN_FLIGHT = 1000

/** Every round of every contender, by shape, then by contender name. */
export type MixSamples = Record<Shape, Record<string, number[]>>

async function main(): Promise<void> {
  const [list, ms, rounds, warmup] = process.argv.slice(2)
  const algorithms = (list ?? '').split(',') as AlgorithmName[]
  const durationMs = Number(ms)
  const keys = Array.from({ length: KEYS }, (_, i) => `user:${i}`)
  const key = (i: number) => keys[i % KEYS] as string
  const consumers = algorithms.map((algorithm) => {
    const limiter = createLimiter({ algorithm, limit: LIMIT, window: WINDOW_MS, store: new MemoryStore() })
    return { name: `sluice ${algorithm}`, consume: (i: number): Promise<unknown> => limiter.consume(key(i)) }
  })
  const flexible = new RateLimiterMemory({ points: LIMIT, duration: WINDOW_MS / 1000 })
  consumers.push({ name: 'rate-limiter-flexible', consume: (i: number) => flexible.consume(key(i)) })
  const contenders: Contender[] = SHAPES.flatMap((shape) =>
    consumers.map(({ name, consume }) => ({
      name: `${shape}|${name}`,
      measure: () =>
        shape === 'sequential'
          ? opsPerSecond(durationMs, consume, 'cpu')
          : concurrentOpsPerSecond(durationMs, IN_FLIGHT, consume, 'cpu'),
    })),
  )
  const results = await alternate(contenders, { rounds: Number(rounds), warmup: Number(warmup) })
  const samples = { sequential: {}, '1000 in flight': {} } as MixSamples
  for (const [name, summary] of results) {
    const [shape, contender] = name.split('|') as [Shape, string]
    samples[shape][contender] = [...summary.samples]
  }
  process.send?.(samples)
  process.exit(0)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
