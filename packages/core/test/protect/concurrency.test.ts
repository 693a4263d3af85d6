import { createConcurrencyLimiter, InvalidOptionError, MemoryLeaseStore } from '@sluice/core'
import { acquireLeases, type LeaseScope, type LeaseTable, renewLeases } from '@sluice/core/store'
import { VirtualTime } from '../../../../examples/overload/virtual-time'
import { countingTimers } from '../helpers/counting-timers'

function limiterAt(options: { limit?: number; globalLimit?: number; lease?: number }) {
  const time = new VirtualTime()
  const store = new MemoryLeaseStore()
  return { time, store, limiter: createConcurrencyLimiter({ ...options, store, timers: time }) }
}

test('a slot per request in flight, per key: the limit-th + 1 is refused until one is released', async () => {
  const { limiter } = limiterAt({ limit: 2 })
  const a1 = await limiter.acquire('a')
  const a2 = await limiter.acquire('a')
  const a3 = await limiter.acquire('a')
  expect([a1.allowed, a2.allowed, a3.allowed]).toEqual([true, true, false])
  expect([a1.inFlight, a2.inFlight, a3.inFlight, a3.limit]).toEqual([1, 2, 2, 2])
  expect((await limiter.acquire('b')).allowed).toBe(true)
  await a1.release()
  expect((await limiter.acquire('a')).allowed).toBe(true)
  expect(limiter.held).toBe(3)
})

test('release is idempotent: a slot released twice frees one place', async () => {
  const { limiter } = limiterAt({ limit: 2 })
  const a1 = await limiter.acquire('a')
  await limiter.acquire('a')
  await Promise.all([a1.release(), a1.release()])
  await a1.release()
  expect((await limiter.acquire('a')).allowed).toBe(true)
  expect((await limiter.acquire('a')).allowed).toBe(false)
  expect(limiter.held).toBe(2)
})

test('a global limit counts every key together, and binds alongside the per-key one', async () => {
  const { limiter } = limiterAt({ limit: 2, globalLimit: 3 })
  const slots = [await limiter.acquire('a'), await limiter.acquire('b'), await limiter.acquire('c')]
  expect(slots.map((s) => s.allowed)).toEqual([true, true, true])
  const refused = await limiter.acquire('d')
  expect([refused.allowed, refused.inFlight, refused.limit]).toEqual([false, 3, 3])
  await slots[0]?.release()
  expect((await limiter.acquire('d')).allowed).toBe(true)
})

test('a refused request is told when a slot should free: the mean hold time over the requests in flight', async () => {
  const { time, limiter } = limiterAt({ limit: 2 })
  expect((await limiter.acquire('warm')).allowed).toBe(true)
  const first = await limiter.acquire('a')
  time.runUntil(400)
  await first.release()
  await limiter.acquire('a')
  await limiter.acquire('a')
  const refused = await limiter.acquire('a')
  expect(refused.retryAfterMs).toBe(200)
})

test('regression: a slot held in memory expired while the event loop was blocked for longer than its lease', async () => {
  // Default options: the default memory store, the default 30 s lease and real timers, faked so that the clock can
  // jump past the lease while no timer runs (a loop blocked for 31 s: the renewal could not run).
  jest.useFakeTimers()
  try {
    const limiter = createConcurrencyLimiter({ limit: 1 })
    const held = await limiter.acquire('a')
    jest.setSystemTime(Date.now() + 31_000)
    const second = await limiter.acquire('a')
    expect([held.allowed, second.allowed]).toEqual([true, false])
    jest.advanceTimersByTime(31_000) // the renewals that were due run, late
    expect((await limiter.acquire('a')).allowed).toBe(false)
    await held.release()
    expect((await limiter.acquire('a')).allowed).toBe(true)
  } finally {
    jest.useRealTimers()
  }
})

test('regression: a lease too short to renew was accepted (down to 1 ms); it must be at least 1 s', () => {
  for (const lease of [1, 300, 999, '999ms'] as const) {
    let refused: unknown
    try {
      createConcurrencyLimiter({ limit: 1, lease })
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(InvalidOptionError)
    expect((refused as InvalidOptionError).option).toBe('lease')
    expect((refused as Error).message).toContain("must be at least '1s'")
  }
  expect(createConcurrencyLimiter({ limit: 1, lease: '1s' }).scope.leaseMs).toBe(1000)
})

test('the lease table: expired leases are dropped when a table looks full, at exactly their expiry', () => {
  const table: LeaseTable = new Map([['old', 1000]])
  expect(acquireLeases([table], [1], 'new', 999, 500)).toEqual({ allowed: false, inFlight: [1] })
  expect(acquireLeases([table], [1], 'new', 1000, 500)).toEqual({ allowed: true, inFlight: [1] })
  expect(table.get('new')).toBe(1500)
  // All or nothing: a full second table refuses without taking a lease in the first.
  const first: LeaseTable = new Map()
  const second: LeaseTable = new Map([['x', 9999]])
  expect(acquireLeases([first, second], [5, 1], 'h', 0, 100)).toEqual({ allowed: false, inFlight: [0, 1] })
  expect(first.size).toBe(0)
})

test('the memory lease store holds nothing once every slot is released', async () => {
  const { store, limiter } = limiterAt({ limit: 5, globalLimit: 10 })
  const slots = await Promise.all(Array.from({ length: 5 }, (_, i) => limiter.acquire(`k${i}`)))
  for (const slot of slots) await slot.release()
  const scope: LeaseScope = limiter.scope
  expect(store.held(scope, 'k0')).toEqual([0, 0])
  expect(limiter.held).toBe(0)
})

test('a refused request before any slot was released is told a second over the requests in flight', async () => {
  const { limiter } = limiterAt({ limit: 2 })
  await limiter.acquire('a')
  await limiter.acquire('a')
  expect((await limiter.acquire('a')).retryAfterMs).toBe(500)
})

test('the hold time runs from acquire to release, and the mean follows recent holds slowly (1/32 a release)', async () => {
  const { time, limiter } = limiterAt({ limit: 2 })
  time.runUntil(100)
  const first = await limiter.acquire('a')
  time.runUntil(500)
  await first.release() // held 400 ms
  time.runUntil(600)
  const second = await limiter.acquire('a')
  time.runUntil(680)
  await second.release() // held 80 ms: the mean moves to 400 + (80 - 400) / 32 = 390 ms
  await limiter.acquire('a')
  await limiter.acquire('a')
  expect((await limiter.acquire('a')).retryAfterMs).toBe(195)
})

test('acquire() without a key counts under the empty key; a key that is not a string is refused', async () => {
  const { limiter } = limiterAt({ limit: 1 })
  expect((await limiter.acquire()).allowed).toBe(true)
  expect((await limiter.acquire('')).allowed).toBe(false)
  await expect(limiter.acquire(5 as unknown as string)).rejects.toThrow(
    /^sluice: a concurrency key must be a string \(got 5\)$/,
  )
})

test('a global-only limiter counts every key in one table', async () => {
  const { store, limiter } = limiterAt({ globalLimit: 2 })
  expect((await limiter.acquire('a')).allowed).toBe(true)
  expect((await limiter.acquire('b')).allowed).toBe(true)
  const refused = await limiter.acquire('c')
  expect([refused.allowed, refused.inFlight, refused.limit]).toEqual([false, 2, 2])
  expect(store.held(limiter.scope, 'anything')).toEqual([2])
})

test('limiters on one store share their slots only under the same name and prefix', async () => {
  const store = new MemoryLeaseStore()
  const build = (name: string, prefix: string) => createConcurrencyLimiter({ limit: 1, name, prefix, store })
  expect((await build('uploads', 'sluice').acquire('k')).allowed).toBe(true)
  expect((await build('downloads', 'sluice').acquire('k')).allowed).toBe(true)
  expect((await build('uploads', 'other').acquire('k')).allowed).toBe(true)
  expect((await build('uploads', 'sluice').acquire('k')).allowed).toBe(false)
})

test('renewals extend the leases still held, per key, and stop (with their timer) once nothing is held', async () => {
  const time = new VirtualTime()
  const store = new MemoryLeaseStore()
  const renewals: string[] = []
  const recording = {
    acquire: store.acquire.bind(store),
    release: store.release.bind(store),
    renew(scope: LeaseScope, key: string, holders: readonly string[]) {
      renewals.push(`${time.now()} ${key}:${holders.length}`)
      store.renew(scope, key, holders)
    },
  }
  const { timers, timersSet } = countingTimers(time)
  const limiter = createConcurrencyLimiter({ limit: 5, lease: 3000, store: recording, timers })
  const a1 = await limiter.acquire('a')
  const a2 = await limiter.acquire('a')
  const b1 = await limiter.acquire('b')
  time.runUntil(500)
  await a1.release()
  time.runUntil(1500)
  expect(renewals).toEqual(['1000 a:1', '1000 b:1'])
  await a2.release()
  await b1.release()
  time.runUntil(100_000)
  expect(renewals).toEqual(['1000 a:1', '1000 b:1'])
  expect(timersSet()).toBe(2)
})

test('in memory a renewal changes nothing: a released holder is not taken back, a held one never expires', () => {
  const store = new MemoryLeaseStore()
  const scope: LeaseScope = { prefix: 'sluice', name: 'n', limits: [2], global: false, leaseMs: 1000 }
  store.acquire(scope, 'a', 'h1')
  store.acquire(scope, 'a', 'h2')
  store.release(scope, 'a', 'h1')
  store.renew(scope, 'a', ['h1', 'h2'])
  expect(store.held(scope, 'a')).toEqual([1])
})

test('the lease table renews as lease.lua does: a lost lease is taken again, even in a full table', () => {
  const table: LeaseTable = new Map([['other', 5000]])
  expect(renewLeases([table], ['h1', 'other'], 2000, 1000)).toBe(1)
  expect([...table]).toEqual([
    ['other', 3000],
    ['h1', 3000],
  ])
  // Over the limit now, the table admits nobody until enough leases are released.
  expect(acquireLeases([table], [1], 'h2', 2500, 1000)).toEqual({ allowed: false, inFlight: [2] })
})

test('the lease table counts expired leases until it looks full, as lease.lua does', () => {
  const table: LeaseTable = new Map([['old', 1000]])
  expect(acquireLeases([table], [5], 'new', 2000, 500)).toEqual({ allowed: true, inFlight: [2] })
  expect(table.has('old')).toBe(true)
})

describe('concurrency limits: option errors name the option and say what it takes', () => {
  test.each<[string, unknown, string, string]>([
    ['options as an array', [], 'options', 'must be an object (got an array)'],
    ['no limit', {}, 'limit', 'is required (or `globalLimit`, or both)'],
    ['maxConcurrent (another library)', { maxConcurrent: 5 }, 'maxConcurrent', '(use `limit`)'],
    ['max (another library)', { max: 5 }, 'max', 'is not an option of createConcurrencyLimiter (use `limit`)'],
    [
      'a name that is a number',
      { limit: 5, name: 5 },
      'name',
      "must be 1 to 64 letters, digits, '_', '.' or '-' (got 5)",
    ],
    ['a name of 65 letters', { limit: 5, name: 'n'.repeat(65) }, 'name', 'must be 1 to 64 letters'],
    ['a prefix that is a number', { limit: 5, prefix: 5 }, 'prefix', 'must be a non-empty string (got 5)'],
    [
      'a store without renew',
      { limit: 5, store: { acquire() {}, release() {} } },
      'store',
      'must be a lease store with acquire, renew and release (got object)',
    ],
    ['a store that is a string', { limit: 5, store: 'redis' }, 'store', '(got "redis")'],
    [
      'timers without now',
      { limit: 5, timers: { setTimeout() {}, clearTimeout() {} } },
      'timers',
      'must have now(), setTimeout() and clearTimeout()',
    ],
  ])('%s', (_name, options, option, message) => {
    let refused: unknown
    try {
      createConcurrencyLimiter(options as never)
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(InvalidOptionError)
    expect((refused as InvalidOptionError).option).toBe(option)
    expect((refused as Error).message).toContain(message)
  })

  test('every option together is accepted, and a null store means the default', async () => {
    const limiter = createConcurrencyLimiter({
      limit: 1,
      globalLimit: 2,
      lease: '10s',
      store: null as unknown as MemoryLeaseStore,
      name: 'a-b.c_d',
      prefix: 'p',
      timers: new VirtualTime(),
    })
    expect(limiter.store).toBeInstanceOf(MemoryLeaseStore)
    expect(limiter.scope).toEqual({ prefix: 'p', name: 'a-b.c_d', limits: [1, 2], global: true, leaseMs: 10_000 })
    expect((await limiter.acquire('k')).allowed).toBe(true)
  })
})
