import { randomBytes } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createLimiter, MemoryStore } from '@sluice/core'

describe('MemoryStore', () => {
  test('a flood of 200 000 distinct keys through maxKeys 20 000 never holds more than 20 000 keys', () => {
    let now = 0
    const store = new MemoryStore({ maxKeys: 20_000, clock: () => now })
    const { rules } = createLimiter({ algorithm: 'token-bucket', limit: 10, window: '1h' })
    // The store's own entry point, without awaiting: 200 000 awaits would only slow the test down.
    const bound = store.bind(rules)
    let largest = 0
    for (let i = 0; i < 200_000; i++) {
      bound.apply([`ip:${i}`], 1, true)
      if (store.size > largest) largest = store.size
      if (i % 20_000 === 0) now += 1
    }
    expect(largest).toBe(20_000)
    store.clear()
  })

  test('evicts the least recently used key, not one in use', async () => {
    const store = new MemoryStore({ maxKeys: 8 })
    const limiter = createLimiter({ algorithm: 'fixed-window', limit: 1000, window: '1h', store })
    await limiter.consume('hot')
    for (let i = 0; i < 100; i++) {
      await limiter.consume(`cold:${i}`)
      await limiter.consume('hot')
    }
    expect((await limiter.peek('hot')).remaining).toBe(1000 - 101) // never evicted, so it kept every count
    expect(store.size).toBe(8)
    store.clear()
  })

  test('evicts the least recently used key, not the first one in: a key read since is kept', async () => {
    const store = new MemoryStore({ maxKeys: 3 })
    const limiter = createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1h', store })
    for (const key of ['a', 'b', 'c']) await limiter.consume(key)
    await limiter.peek('a')
    await limiter.consume('d')
    expect(store.size).toBe(3)
    expect((await limiter.peek('a')).remaining).toBe(4)
    expect((await limiter.peek('b')).remaining).toBe(5) // evicted: it starts over
    store.clear()
  })

  test('expired state is dropped when read and by the sweep', async () => {
    let now = 0
    const store = new MemoryStore({ clock: () => now })
    const limiter = createLimiter({ algorithm: 'sliding-log', limit: 2, window: '1s', store })
    for (let i = 0; i < 50; i++) await limiter.consume(`k${i}`)
    expect(store.size).toBe(50)
    now = 999
    store.sweep()
    expect(store.size).toBe(50)
    now = 1000 // an entry exactly W old has expired
    store.sweep()
    expect(store.size).toBe(0)
  })

  test('its sweep timer does not keep the process alive', async () => {
    const store = new MemoryStore()
    await createLimiter({ limit: 1, window: '1s', store }).consume('k')
    const timer = (store as unknown as { tables: { sweeper: NodeJS.Timeout } }).tables.sweeper
    expect(timer.hasRef()).toBe(false)
    store.clear()
  })

  test('a request never evicts its own keys: maxKeys 1 with two stacked rules still limits a client', async () => {
    const store = new MemoryStore({ maxKeys: 1 })
    const limiter = createLimiter({
      store,
      rules: [
        { name: 'user', limit: 5, window: '1m' },
        { name: 'tenant', limit: 100, window: '1m' },
      ],
    })
    let admitted = 0
    for (let i = 0; i < 10; i++) if ((await limiter.consume(['user:1', 'tenant:a'])).allowed) admitted++
    expect(admitted).toBe(5)
    // The bound gives way only as far as one request's own keys: a new client evicts the old one's.
    expect(store.size).toBe(2)
    await limiter.consume(['user:2', 'tenant:b'])
    expect(store.size).toBe(2)
    store.clear()
  })

  test('a 15 KB key costs the store no more than a short one: long keys are kept by their SHA-256', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const store = new MemoryStore()
    const limiter = createLimiter({ limit: 10, window: '1h', store })
    const keys = 2000
    const heapAfterGc = () => {
      gc()
      gc()
      return process.memoryUsage().heapUsed
    }
    const before = heapAfterGc()
    // Each key a flat string of its own (a concatenation would share one long string between them), dropped once used.
    for (let i = 0; i < keys; i++) await limiter.consume(randomBytes(7680).toString('hex'))
    const bytesPerKey = (heapAfterGc() - before) / keys
    expect(store.size).toBe(keys)
    expect(bytesPerKey).toBeLessThan(1024)
    store.clear()
  })
})
