import { randomBytes } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createLimiter, InvalidOptionError, MemoryStore, type MemoryStoreOptions, type RuleOptions } from '@sluice/core'
import { longKeyDigest, MAX_KEPT_KEY_LENGTH } from '@sluice/core/store'

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

/** A store on a clock that stays at `time.now` until the test moves it. */
function storeAt(now: number, options: MemoryStoreOptions = {}) {
  const time = { now }
  return { time, store: new MemoryStore({ ...options, clock: () => time.now }) }
}

describe('MemoryStore options', () => {
  test.each([
    ['maxKeys', { maxKeys: 0 }, 'must be a positive whole number (got 0)'],
    ['maxKeys', { maxKeys: 2.5 }, 'must be a positive whole number (got 2.5)'],
    ['sweepIntervalMs', { sweepIntervalMs: 0 }, 'must be a positive whole number (got 0)'],
    ['sweepIntervalMs', { sweepIntervalMs: -1000 }, 'must be a positive whole number (got -1000)'],
    ['clock', { clock: 0 }, 'must be a function'],
  ])('a bad %s is refused at construction, by name', (option, options, gist) => {
    const construct = () => new MemoryStore(options as unknown as MemoryStoreOptions)
    expect(construct).toThrow(InvalidOptionError)
    expect(construct).toThrow(`option "${option}" ${gist}`)
  })
})

describe('MemoryStore keys longer than MAX_KEPT_KEY_LENGTH', () => {
  test.each([
    ['a single rule', [{ name: 'minute', limit: 3, window: '1m' }]],
    [
      'stacked rules',
      [
        { name: 'minute', limit: 3, window: '1m' },
        { name: 'hour', limit: 3, window: '1h' },
      ],
    ],
  ])(
    'with %s, a key of 256, 257 or 15 000 characters is counted, refunded and reset like any other',
    async (_, rules) => {
      for (const length of [MAX_KEPT_KEY_LENGTH, MAX_KEPT_KEY_LENGTH + 1, 15_000]) {
        const { store } = storeAt(0)
        const limiter = createLimiter({ algorithm: 'fixed-window', rules: rules as RuleOptions[], store })
        const key = 'k'.repeat(length)
        await limiter.consume(key)
        await limiter.consume(key)
        expect((await limiter.peek(key)).remaining).toBe(1)
        await limiter.refund(key)
        expect((await limiter.peek(key)).remaining).toBe(2)
        await limiter.reset(key)
        expect((await limiter.peek(key)).remaining).toBe(3)
        expect(store.size).toBe(0)
      }
    },
  )

  test('a long key is blocked like a short one, for the whole block, and a reset lifts the block', async () => {
    const { time, store } = storeAt(0)
    const limiter = createLimiter({ name: 'login', limit: 2, window: '1m', block: '15m', store })
    const key = `login:${'x'.repeat(400)}`
    await limiter.consume(key)
    await limiter.consume(key)
    expect(await limiter.consume(key)).toMatchObject({ allowed: false, retryAfterMs: 15 * 60_000 })
    time.now = 2 * 60_000 // the window is over, the block is not
    expect(await limiter.consume(key)).toMatchObject({ allowed: false, retryAfterMs: 13 * 60_000 })
    await limiter.reset(key)
    expect((await limiter.consume(key)).allowed).toBe(true)
  })

  test('stacked rules keep a count each for one long key, and a block each', async () => {
    // Mid-hour, so the 10 s windows and the hour window start at different times.
    const { time, store } = storeAt(3_615_000)
    const limiter = createLimiter({
      algorithm: 'fixed-window',
      rules: [
        { name: 'burst', limit: 2, window: '10s', block: '1m' },
        { name: 'hour', limit: 100, window: '1h', block: '1h' },
      ],
      store,
    })
    const key = 'k'.repeat(300)
    await limiter.consume([key, key])
    expect((await limiter.peek([key, key])).rules?.map((d) => d.remaining)).toEqual([1, 99])
    await limiter.consume([key, key])
    const blocked = await limiter.consume([key, key])
    expect(blocked).toMatchObject({ allowed: false, rule: 'burst', retryAfterMs: 60_000 })
    // Only the rule that refused started its block: the hour would still admit.
    expect(blocked.rules?.[1]).toMatchObject({ rule: 'hour', allowed: true, remaining: 98 })
    time.now += 30_000
    const during = await limiter.peek([key, key])
    expect(during.rules?.map((d) => [d.rule, d.allowed, d.retryAfterMs])).toEqual([
      ['burst', false, 30_000],
      ['hour', true, 0],
    ])
    time.now += 30_000
    expect((await limiter.consume([key, key])).rules?.map((d) => d.remaining)).toEqual([1, 97])
  })

  test('a short key spelled as the SHA-256 of a long key is another client: it shares neither count nor block', async () => {
    const { store } = storeAt(0)
    const limiter = createLimiter({ algorithm: 'fixed-window', limit: 1, window: '1m', block: '10m', store })
    const long = 'x'.repeat(300)
    const twin = longKeyDigest(long)
    await limiter.consume(long)
    expect((await limiter.consume(long)).retryAfterMs).toBe(10 * 60_000)
    expect(await limiter.consume(twin)).toMatchObject({ allowed: true, remaining: 0 })
  })
})

describe('MemoryStore memory: what it holds and for how long', () => {
  test('a rule without `block` is never refused by a block another limiter recorded under the same name', async () => {
    const { store } = storeAt(0)
    const login = createLimiter({
      algorithm: 'fixed-window',
      name: 'login',
      limit: 1,
      window: '1m',
      block: '1h',
      store,
    })
    const api = createLimiter({
      algorithm: 'sliding-log',
      rules: [
        { name: 'login', limit: 5, window: '1m' },
        { name: 'tenant', limit: 100, window: '1h', block: '1h' },
      ],
      store,
    })
    for (const key of ['k', 'k'.repeat(300)]) {
      await login.consume(key)
      expect((await login.consume(key)).retryAfterMs).toBe(3_600_000) // blocked for an hour
      expect(await api.consume([key, key])).toMatchObject({ allowed: true, rule: 'login', remaining: 4 })
    }
  })

  test.each([
    ['a single rule', [{ name: 'minute', limit: 5, window: '1m' }], ['a'], ['b'], ['c'], ['d']],
    [
      'stacked rules',
      [
        { name: 'minute', limit: 5, window: '1m' },
        { name: 'hour', limit: 5, window: '1h' },
      ],
      ['a', 'a'],
      ['b', 'b'],
      ['c', 'c'],
      ['d', 'd'],
    ],
  ])('with %s, peeking at new keys adds none, so it never evicts a key in use', async (_, rules, ...keys) => {
    const [a, b, c, d] = keys as [string[], string[], string[], string[]]
    const { store } = storeAt(0, { maxKeys: rules.length * 2 })
    const limiter = createLimiter({ algorithm: 'fixed-window', rules: rules as RuleOptions[], store })
    await limiter.consume(a)
    await limiter.consume(b)
    for (const key of [c, d, c]) expect((await limiter.peek(key)).remaining).toBe(5)
    expect(store.size).toBe(rules.length * 2)
    expect((await limiter.peek(a)).remaining).toBe(4)
    expect((await limiter.peek(b)).remaining).toBe(4)
  })

  test('a refund for a key with nothing charged (never seen, or expired) keeps nothing', async () => {
    const { time, store } = storeAt(0)
    const limiter = createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1m', store })
    await limiter.refund('never-seen')
    expect(store.size).toBe(0)
    await limiter.consume('k')
    time.now = 60_000
    await limiter.refund('k')
    store.sweep()
    expect(store.size).toBe(0)
    expect((await limiter.peek('k')).remaining).toBe(5)
  })

  test('a refund that fills a bucket again forgets the key, as Redis deletes it', async () => {
    const { store } = storeAt(0)
    const limiter = createLimiter({ algorithm: 'token-bucket', limit: 10, window: '10s', store })
    await limiter.consume('k', 3)
    expect(store.size).toBe(1)
    await limiter.refund('k', 3)
    expect(store.size).toBe(0)
    expect((await limiter.peek('k')).remaining).toBe(10)
  })

  test('a block is held until it ends, and swept then', async () => {
    const { time, store } = storeAt(1000)
    const limiter = createLimiter({ name: 'login', limit: 1, window: '1s', block: '1m', store })
    await limiter.consume('k')
    expect(store.size).toBe(1) // a count, and no block yet
    expect((await limiter.consume('k')).retryAfterMs).toBe(60_000)
    expect(store.size).toBe(2) // the count and the block's end
    time.now = 60_999
    store.sweep()
    expect(store.size).toBe(1)
    time.now = 61_000
    store.sweep()
    expect(store.size).toBe(0)
    expect((await limiter.consume('k')).allowed).toBe(true)
  })

  test('a count seen expired stays gone when the clock then steps back, as in Redis', async () => {
    const { time, store } = storeAt(0)
    const limiter = createLimiter({ algorithm: 'fixed-window', limit: 1, window: '1s', store })
    await limiter.consume('k')
    time.now = 1000 // the entry is exactly a window old: expired
    expect((await limiter.peek('k')).remaining).toBe(1)
    time.now = 999
    expect((await limiter.consume('k')).allowed).toBe(true)
  })

  test('with maxKeys below a stack of keys and an old block around, a count evicted mid-request is written back', async () => {
    const { time, store } = storeAt(0, { maxKeys: 1 })
    const limiter = createLimiter({
      algorithm: 'fixed-window',
      rules: [
        { name: 'tenant', limit: 100, window: '1h' },
        { name: 'user', limit: 1, window: '1s', block: '1500ms' },
      ],
      store,
    })
    await limiter.consume(['t1', 'u'])
    expect((await limiter.consume(['t1', 'u'])).rule).toBe('user') // refused, and blocked until 1500
    time.now = 2000 // the user's window and block are over; their entries are still held
    expect((await limiter.consume(['t2', 'u'])).allowed).toBe(true)
    expect(await limiter.consume(['t2', 'u'])).toMatchObject({ allowed: false, rule: 'user' })
  })
})

describe('MemoryStore sweep timer', () => {
  beforeEach(() => jest.useFakeTimers())
  afterEach(() => jest.useRealTimers())

  test('one timer sweeps expired keys every sweepIntervalMs, and stops once the store is empty', async () => {
    const { time, store } = storeAt(0, { sweepIntervalMs: 1000 })
    const second = createLimiter({ name: 'second', algorithm: 'fixed-window', limit: 5, window: '1s', store })
    const hour = createLimiter({ name: 'hour', algorithm: 'fixed-window', limit: 5, window: '1h', store })
    for (const key of ['a', 'b', 'c']) await second.consume(key)
    await hour.consume('d')
    expect(jest.getTimerCount()).toBe(1)
    time.now = 1000
    jest.advanceTimersByTime(1000)
    expect(store.size).toBe(1) // the hour's key is left, and so is the timer
    expect(jest.getTimerCount()).toBe(1)
    time.now = 3_600_000
    jest.advanceTimersByTime(1000)
    expect(store.size).toBe(0)
    expect(jest.getTimerCount()).toBe(0)
  })
})
