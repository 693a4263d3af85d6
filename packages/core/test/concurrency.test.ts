import { createConcurrencyLimiter, MemoryLeaseStore } from '@sluice/core'
import { acquireLeases, type LeaseScope, type LeaseTable } from '@sluice/core/store'
import { VirtualTime } from '../../../examples/overload/virtual-time'

function limiterAt(options: { limit?: number; globalLimit?: number; lease?: number }) {
  const time = new VirtualTime()
  const store = new MemoryLeaseStore({ clock: () => time.now() })
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

test('a lease that is not renewed expires after `lease`; the limiter renews the slots it holds', async () => {
  const { time, store, limiter } = limiterAt({ limit: 2, lease: 300 })
  const scope = limiter.scope
  // A holder that died: it took a lease and will never renew or release it.
  expect(store.acquire(scope, 'a', 'crashed-instance:1').allowed).toBe(true)
  const held = await limiter.acquire('a')
  expect((await limiter.acquire('a')).allowed).toBe(false)
  time.runUntil(299)
  expect((await limiter.acquire('a')).allowed).toBe(false)
  // At 300 ms the dead lease is gone; the held one was renewed every 100 ms and is not.
  time.runUntil(300)
  const next = await limiter.acquire('a')
  expect(next.allowed).toBe(true)
  time.runUntil(5_000)
  expect((await limiter.acquire('a')).allowed).toBe(false)
  await held.release()
  await next.release()
  expect(store.held(scope, 'a')).toEqual([0])
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
