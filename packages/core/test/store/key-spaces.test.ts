import { createLimiter, type Logger, MemoryStore } from '@sluice/core'
import { freezeDate } from '../../../../scripts/frozen-date'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, warn: (m: string) => warnings.push(m), error: () => {} }
}

describe('key spaces on one store', () => {
  test('limiters with their own name, prefix or algorithm count apart, and nothing is reported', async () => {
    const store = new MemoryStore()
    const logger = recordingLogger()
    const all = createLimiter({ limit: 1, window: '1m', store, logger })
    const login = createLimiter({ name: 'login', limit: 1, window: '1m', store, logger })
    const other = createLimiter({ prefix: 'other', limit: 1, window: '1m', store, logger })
    const bucket = createLimiter({ algorithm: 'leaky-bucket', limit: 1, window: '1m', store, logger })
    for (const limiter of [all, login, other, bucket]) expect((await limiter.consume('k')).allowed).toBe(true)
    expect(logger.warnings).toEqual([])
  })

  test('a second limiter in the same key space shares its counts, and the store says so once', async () => {
    const store = new MemoryStore()
    const logger = recordingLogger()
    const first = createLimiter({ limit: 2, window: '1m', store, logger })
    // Another limit, same prefix, name and algorithm: the same counter.
    const second = createLimiter({ limit: 5, window: '1m', store, logger })
    createLimiter({ limit: 5, window: '1m', store, logger })
    await first.consume('k')
    await first.consume('k')
    expect((await second.peek('k')).remaining).toBe(3)
    expect(logger.warnings).toHaveLength(1)
    expect(logger.warnings[0]).toContain('"sluice:default"')
    // ...and what to do about it.
    expect(logger.warnings[0]).toContain('Give each its own `name` or `prefix`, or use one limiter in both places.')
  })
})
