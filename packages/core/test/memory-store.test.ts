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
})
