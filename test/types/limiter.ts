// createLimiter's option types: each mistake is a compile error (an unused @ts-expect-error fails too), and each
// valid form compiles.
import { type AlgorithmName, createLimiter, MemoryStore } from '@sluice/core'

// @ts-expect-error no limit, no window
createLimiter({})
// @ts-expect-error a window algorithm needs a window
createLimiter({ limit: 5 })
// @ts-expect-error a bucket needs a window or a rate
createLimiter({ algorithm: 'token-bucket', limit: 5 })
// @ts-expect-error rate is a bucket's
createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1m', rate: 3 })
// @ts-expect-error rate without an algorithm: the default is a sliding window
createLimiter({ limit: 5, window: '1m', rate: 3 })
// @ts-expect-error rules with a top-level limit
createLimiter({ limit: 5, rules: [{ limit: 5, window: '1s' }] })
// @ts-expect-error a quota has no window
createLimiter({ period: 'day', limit: 5, window: '1s' })
// @ts-expect-error timeZone needs a period
createLimiter({ algorithm: 'token-bucket', limit: 5, window: '1s', timeZone: 'UTC' })
createLimiter({
  rules: [
    { name: 'a', limit: 5, window: '1s' },
    // @ts-expect-error a stacked bucket needs a window or a rate
    { name: 'b', algorithm: 'leaky-bucket', limit: 3 },
  ],
})
// @ts-expect-error a stacked rule needs a window
createLimiter({ rules: [{ name: 'a', limit: 5 }] })
// @ts-expect-error limit is required
createLimiter({ window: '1m' })

createLimiter({ limit: 5, window: '1m' })
createLimiter({ limit: 5, window: 60_000, algorithm: 'sliding-log', name: 'login', block: '15m' })
createLimiter({ algorithm: 'token-bucket', limit: 5, rate: 1 })
createLimiter({ algorithm: 'token-bucket', limit: 5, window: '1m' })
createLimiter({ algorithm: 'leaky-bucket', limit: 5, window: '1m', rate: 1, prefix: 'x', cost: 2 })
createLimiter({ period: 'day', limit: 5, timeZone: 'Europe/Paris', block: '1h' })
createLimiter({ period: 'month', limit: 5, algorithm: 'fixed-window' })
createLimiter({
  store: new MemoryStore(),
  rules: [
    { name: 'a', limit: 5, window: '1s' },
    { name: 'b', algorithm: 'leaky-bucket', limit: 3, rate: 1 },
    { name: 'c', limit: 100, period: 'day' },
  ],
})
createLimiter({
  algorithm: 'token-bucket',
  rules: [
    { name: 'a', limit: 5, rate: 1 },
    { name: 'b', limit: 9, window: '1m' },
  ],
})
for (const algorithm of ['fixed-window', 'token-bucket'] as AlgorithmName[]) {
  createLimiter({ algorithm, limit: 5, window: '1s' })
  createLimiter({ algorithm, rules: [{ name: 'a', limit: 5, window: '1s' }] })
}
