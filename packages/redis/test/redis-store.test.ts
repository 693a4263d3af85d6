import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  type AlgorithmName,
  type CompiledRule,
  createLimiter,
  InvalidOptionError,
  keyHash,
  type LimiterOptions,
  MemoryStore,
  StoreKeyError,
} from '@sluice/core'
import { RedisLeaseStore, RedisStore, type RedisStoreOptions } from '@sluice/redis'
import fc from 'fast-check'
import Redis from 'ioredis'
import { commandCalls as commandCallsOf, privateRedis } from '../../../scripts/redis-suite'
import { redisKeyOf } from '../src/keys'
import { replayStore } from '../src/redis-store'
import { ALGORITHM_SOURCES, scriptFor } from '../src/script'

let client: Redis

privateRedis((redis) => ({ client } = redis), { resetEachTest: true })

const commandCalls = () => commandCallsOf(client)

/**
 * The keys that hold limiting state: every key but the registries of the rules each store counts with (one small hash
 * per key space, `...:~rules`, written when a store binds a rule; see "Separate stores sharing a key space").
 */
async function stateKeys(): Promise<string[]> {
  return (await client.keys('*')).filter((key) => !key.endsWith('~rules'))
}

const quiet = { warn: () => {}, error: () => {}, info: () => {} }

describe('options', () => {
  const valid: RedisStoreOptions = {
    client: new Redis({ lazyConnect: true, enableOfflineQueue: false, autoResendUnfulfilledCommands: false }),
  }
  afterAll(() => valid.client && (valid.client as Redis).disconnect())

  test.each<[string, Record<string, unknown>]>([
    ['client', { client: undefined }],
    ['client', { client: { evalsha: () => {} } }],
    ['timeout', { timeout: 0 }],
    ['timeout', { timeout: 12.5 }],
    ['timeout', { timeout: '100' }],
    // Longer than a timer holds: the call's deadline would fire after 1 ms, and again every 1 ms.
    ['timeout', { timeout: 2 ** 31 }],
    ['registryRefreshMs', { registryRefreshMs: 30 * 86_400_000 }],
    ['onError', { onError: 'retry' }],
    ['logger', { logger: { warn: () => {} } }],
    ['probeIntervalMs', { probeIntervalMs: -1 }],
    ['shortCircuitMaxKeys', { shortCircuitMaxKeys: 1.5 }],
    ['shortCircuitMaxMs', { shortCircuitMaxMs: 0 }],
    ['shortCircuitMaxMs', { shortCircuitMaxMs: '1s' }],
    ['localMaxKeys', { localMaxKeys: 0 }],
    ['coalesce', { coalesce: 'no' }],
    ['coalesce', { coalesce: 0 }],
    ['clock', { clock: 42 }],
  ])('a bad %s is an InvalidOptionError naming it', (option, bad) => {
    const attempt = () => replayStore({ ...valid, ...bad } as RedisStoreOptions)
    expect(attempt).toThrow(InvalidOptionError)
    expect(attempt).toThrow(expect.objectContaining({ option }))
  })

  test('a lease store timeout longer than a timer holds (24.8 days) is refused, naming it', () => {
    const attempt = () => new RedisLeaseStore({ client: valid.client, timeout: 30 * 86_400_000 })
    expect(attempt).toThrow(InvalidOptionError)
    expect(attempt).toThrow('option "timeout" must be at most 2147483647 milliseconds, about 24.8 days')
  })

  test('defaults: 100 ms timeout, local fallback', () => {
    const store = new RedisStore(valid)
    expect(store.timeout).toBe(100)
    expect(store.onError).toBe('local')
  })

  test('a second limiter binding the same key space is reported once, to its logger', () => {
    const store = new RedisStore(valid)
    const warnings: string[] = []
    const logger = { warn: (m: string) => warnings.push(m), error: () => {} }
    createLimiter({ limit: 1, window: '1m', store, logger })
    createLimiter({ name: 'login', limit: 1, window: '1m', store, logger })
    expect(warnings).toEqual([])
    createLimiter({ limit: 5, window: '1h', store, logger })
    createLimiter({ limit: 5, window: '1h', store, logger })
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('"sluice:default"')
  })
})

describe('the scripts', () => {
  const codes = Object.keys(ALGORITHM_SOURCES)
  // Every set of algorithms a request can stack: 127 scripts.
  const combinations = Array.from({ length: 2 ** codes.length - 1 }, (_, mask) =>
    codes.filter((_, bit) => ((mask + 1) >> bit) & 1),
  )

  test('SCRIPT LOAD answers the SHA the store sends with EVALSHA, for every set of algorithms', async () => {
    const shas = new Set<string>()
    for (const combination of combinations) {
      const { source, sha } = scriptFor(combination)
      expect(await client.script('LOAD', source)).toBe(sha)
      expect(sha).toBe(createHash('sha1').update(source).digest('hex'))
      shas.add(sha)
    }
    expect(shas.size).toBe(combinations.length)
  })

  test('a script holds exactly the algorithms asked for, in any order and with repeats', () => {
    expect(scriptFor(['tb', 'sw', 'tb'])).toEqual(scriptFor(['sw', 'tb']))
    const { source } = scriptFor(['sw', 'tb'])
    expect(source).toContain('local function sliding_window(state, clock, cost, p, charge)')
    expect(source).toContain('local function token_bucket(state, clock, cost, p, charge)')
    expect(source).not.toContain('local function fixed_window(')
    expect(() => scriptFor([])).toThrow()
    expect(() => scriptFor(['xx'])).toThrow()
  })

  test('holds one Lua file per algorithm, each beside the TypeScript algorithm of the same name', () => {
    const lua = join(__dirname, '../src/lua')
    const core = join(__dirname, '../../core/src/algorithms')
    const helpers = [
      'math.lua',
      'key-time.lua',
      'main.lua',
      'calendar.lua',
      'blocks.lua',
      'window-count.lua',
      'lease.lua',
      'rule-registry.lua',
    ]
    const files = readdirSync(lua).filter((f) => !helpers.includes(f))
    expect(files.length).toBe(codes.length)
    for (const file of files) {
      const name = file.replace('.lua', '')
      const code = codes.find((c) => ALGORITHM_SOURCES[c]?.name === name.replace('-', '_')) as string
      expect(readdirSync(core)).toContain(`${name}.ts`)
      const { source } = scriptFor([code])
      expect(source).toContain(readFileSync(join(lua, file), 'utf8').trimEnd())
      // The clock's time, or the key's (see key-time.lua) decided from it.
      expect(source).toMatch(
        new RegExp(`local function ${name.replace('-', '_')}\\(state, (now|clock), cost, p, charge\\)`),
      )
    }
  })

  test('after SCRIPT FLUSH (as after a restart) the next request reloads the script once and goes on', async () => {
    const limiter = createLimiter({ limit: 2, window: '1m', store: new RedisStore({ client, logger: quiet }) })
    expect((await limiter.consume('flushed')).allowed).toBe(true)
    await client.script('FLUSH')
    await client.config('RESETSTAT')
    expect((await limiter.consume('flushed')).remaining).toBe(0)
    expect((await limiter.consume('flushed')).allowed).toBe(false)
    const calls = await commandCalls()
    expect(calls['eval']).toBe(1)
    expect(calls['evalsha']).toBe(2)
  })

  test('NOSCRIPT reloads each script on its own: one EVAL per set of algorithms, then EVALSHA again', async () => {
    const store = new RedisStore({ client, logger: quiet })
    const single = createLimiter({ algorithm: 'token-bucket', limit: 5, window: '1m', store })
    const stacked = createLimiter({
      store,
      rules: [
        { name: 'user', limit: 5, window: '1m', algorithm: 'sliding-log' },
        { name: 'all', limit: 50, window: '1m', algorithm: 'token-bucket' },
      ],
    })
    await client.script('FLUSH')
    await client.config('RESETSTAT')
    for (let i = 0; i < 3; i++) {
      expect((await single.consume('k')).remaining).toBe(4 - i)
      expect((await stacked.consume('k')).remaining).toBe(4 - i)
    }
    const calls = await commandCalls()
    expect(calls['eval']).toBe(2)
    expect(calls['evalsha']).toBe(6)
    const loaded = [scriptFor(['tb']).sha, scriptFor(['sl', 'tb']).sha, scriptFor(['fw']).sha]
    expect(await client.script('EXISTS', ...loaded)).toEqual([1, 1, 0])
  })
})

describe('round trips', () => {
  test('three stacked rules cost exactly one EVALSHA per request', async () => {
    const limiter = createLimiter({
      store: new RedisStore({ client }),
      rules: [
        { name: 'user', limit: 100, window: '1m' },
        { name: 'tenant', limit: 2000, window: '1m', algorithm: 'fixed-window' },
        { name: 'global', limit: 400, window: '1s', algorithm: 'token-bucket' },
      ],
    })
    await client.script('LOAD', scriptFor(['sw', 'fw', 'tb']).source)
    await client.config('RESETSTAT')
    for (let i = 0; i < 50; i++) await limiter.consume(['user:42', 'tenant:acme', 'all'])
    const calls = await commandCalls()
    expect(calls['evalsha']).toBe(50)
    expect(calls['eval'] ?? 0).toBe(0)
    // Inside those 50 scripts: one GET per rule, one write per rule (a SET, or a SETRANGE in place that keeps the
    // key's expiry when a window's state expires when the one it replaces did).
    expect(calls['get']).toBe(150)
    expect((calls['set'] ?? 0) + (calls['setrange'] ?? 0)).toBe(150)
  })

  test('a flood from one rejected key sends no command to Redis until its retry time', async () => {
    let now = 1_700_000_000_000
    const store = replayStore({ client, clock: () => now })
    const limiter = createLimiter({ limit: 3, window: '1s', algorithm: 'sliding-log', store })
    for (let i = 0; i < 3; i++) expect((await limiter.consume('flood')).allowed).toBe(true)
    const rejected = await limiter.consume('flood')
    expect(rejected.retryAfterMs).toBe(1000)
    await client.config('RESETSTAT')
    for (let i = 0; i < 999; i++) {
      now += 1
      const decision = await limiter.consume('flood')
      expect(decision.allowed).toBe(false)
      expect(decision.retryAfterMs).toBe(999 - i)
    }
    expect((await commandCalls())['evalsha'] ?? 0).toBe(0)
    now += 1 // the retry time: Redis decides again, and admits
    expect((await limiter.consume('flood')).allowed).toBe(true)
    expect((await commandCalls())['evalsha']).toBe(1)
  })

  test('the short-circuit asks Redis about another cost, unless every rule counts a window the cost cannot change', async () => {
    let now = 1_700_000_000_000
    const store = replayStore({ client, clock: () => now })
    const log = createLimiter({ limit: 3, window: '1s', algorithm: 'sliding-log', store })
    const fixed = createLimiter({ limit: 3, window: '1s', algorithm: 'fixed-window', store })
    for (const limiter of [log, fixed]) {
      await limiter.consume('costs', 2)
      expect((await limiter.consume('costs', 2)).allowed).toBe(false)
    }
    await client.config('RESETSTAT')
    now += 1
    // In a sliding log a higher cost waits for more entries to expire: Redis answers it. In a fixed window every cost
    // that does not fit waits for the window's end: the short-circuit answers.
    expect((await log.consume('costs', 3)).allowed).toBe(false)
    expect((await fixed.consume('costs', 3)).allowed).toBe(false)
    expect((await commandCalls())['evalsha']).toBe(1)
  })

  test('under a block the short-circuit answers a flood locally, asking Redis once per shortCircuitMaxMs', async () => {
    let now = 1_700_000_000_000
    const store = replayStore({ client, clock: () => now })
    const limiter = createLimiter({ limit: 1, window: '1m', block: '15m', store })
    await limiter.consume('blocked')
    expect((await limiter.consume('blocked')).retryAfterMs).toBe(900_000)
    await client.config('RESETSTAT')
    for (let i = 1; i <= 2000; i++) {
      now += 1
      const decision = await limiter.consume('blocked')
      expect([decision.allowed, decision.retryAfterMs]).toEqual([false, 900_000 - i])
    }
    // At 1000 and at 2000 ms: the rejection is not trusted longer than a second.
    expect((await commandCalls())['evalsha']).toBe(2)
  })

  test('the short-circuit asks Redis again for a smaller cost, which may fit', async () => {
    const now = 1_700_000_000_000
    const store = replayStore({ client, clock: () => now })
    const limiter = createLimiter({ limit: 5, window: '1m', algorithm: 'fixed-window', store })
    expect((await limiter.consume('costly', 4)).allowed).toBe(true)
    expect((await limiter.consume('costly', 3)).allowed).toBe(false)
    expect((await limiter.consume('costly', 1)).allowed).toBe(true)
  })

  test('the short-circuit holds at most shortCircuitMaxKeys keys, dropping the oldest', async () => {
    const now = 1_700_000_000_000
    const store = replayStore({ client, clock: () => now, shortCircuitMaxKeys: 2 })
    const limiter = createLimiter({ limit: 1, window: '1m', store })
    for (const key of ['a', 'b', 'c']) {
      await limiter.consume(key)
      await limiter.consume(key)
    }
    await client.config('RESETSTAT')
    for (const key of ['b', 'c', 'a']) expect((await limiter.consume(key)).allowed).toBe(false)
    expect((await commandCalls())['evalsha']).toBe(1) // only 'a' was forgotten
  })

  test('reset forgets the key in Redis and in the short-circuit', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m', store: new RedisStore({ client }) })
    await limiter.consume('again')
    expect((await limiter.consume('again')).allowed).toBe(false)
    await limiter.reset('again')
    expect((await limiter.consume('again')).allowed).toBe(true)
  })

  test('refund gives the cost back in Redis', async () => {
    const limiter = createLimiter({
      limit: 3,
      window: '1m',
      algorithm: 'token-bucket',
      store: new RedisStore({ client }),
    })
    await limiter.consume('refunded', 3)
    expect((await limiter.peek('refunded')).remaining).toBe(0)
    await limiter.refund('refunded', 2)
    expect((await limiter.peek('refunded')).remaining).toBe(2)
  })

  test('peek writes nothing', async () => {
    const limiter = createLimiter({ limit: 3, window: '1m', store: new RedisStore({ client }) })
    expect((await limiter.peek('peeked')).remaining).toBe(3)
    expect(await stateKeys()).toEqual([])
  })
})

describe('stored values', () => {
  const algorithms: AlgorithmName[] = ['fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket']

  test.each(algorithms)('%s: state near 2^53 round-trips exactly (the same decisions as memory)', async (algorithm) => {
    // Times just below 2^53, where text with 14 significant digits or a float32 would lose the last digits.
    let now = 2 ** 53 - 5_000_000
    const rate = algorithm.endsWith('bucket') ? { rate: 3.7 } : {}
    const options = { algorithm, limit: 7, window: 1_000, ...rate } as LimiterOptions
    const store = replayStore({ client, clock: () => now, shortCircuitMaxKeys: 0 })
    const fromRedis = createLimiter({ ...options, store })
    const fromMemory = createLimiter({ ...options, store: new MemoryStore({ clock: () => now }) })
    for (let i = 0; i < 40; i++) {
      now += [0, 1, 3, 97, 251][i % 5] as number
      const cost = 1 + (i % 3)
      expect(await fromRedis.consume('big', cost)).toEqual(await fromMemory.consume('big', cost))
    }
  })

  test.each([1e13, 2e14])('a %d ms window: the key lives exactly until the window ends', async (window) => {
    // TTLs of 10^14 ms and more go to Redis as text, smaller ones as Lua numbers: both must keep every digit.
    const limiter = createLimiter({ algorithm: 'fixed-window', limit: 5, window, store: new RedisStore({ client }) })
    const decision = await limiter.consume('long')
    const ttl = await client.pttl(redisKeyOf(limiter.rules[0] as CompiledRule, 'long'))
    expect(decision.resetMs).toBeGreaterThan(window / 2)
    expect(ttl).toBeLessThanOrEqual(decision.resetMs + 2)
    expect(ttl).toBeGreaterThan(decision.resetMs - 50)
  })

  test('a value the algorithm cannot read (text, garbage, a longer value) fails that key with StoreKeyError', async () => {
    const store = new RedisStore({ client, onError: 'local', logger: quiet })
    const limiter = createLimiter({ algorithm: 'sliding-window', limit: 5, window: '1m', store })
    const [key] = limiter.rules.map((rule) => redisKeyOf(rule, 'upgraded'))
    const readable = await (async () => {
      await limiter.consume('upgraded')
      return (await client.getBuffer(key as string)) as Buffer
    })()
    const values = [
      `${Date.now() + 60_000} ${Date.now()} 0 5`,
      '9 0 1',
      'x',
      Buffer.concat([readable, Buffer.alloc(8)]),
    ]
    for (const value of values) {
      await client.set(key as string, value, 'PX', 60_000)
      const failed = await limiter.consume('upgraded').catch((error: unknown) => error)
      expect(failed).toBeInstanceOf(StoreKeyError)
      expect(failed).toMatchObject({ keyHash: keyHash('upgraded'), rule: 'default' })
      // Not overwritten, not decided locally: the key is as it was until it is reset.
      expect(await client.getBuffer(key as string)).toEqual(Buffer.isBuffer(value) ? value : Buffer.from(value))
      await limiter.reset('upgraded')
      expect((await limiter.consume('upgraded')).remaining).toBe(4)
      await limiter.reset('upgraded')
    }
  })

  test('a stored number that no state holds (negative, fractional, infinite, NaN) is unreadable too', async () => {
    const store = new RedisStore({ client, onError: 'closed', logger: quiet })
    const limiter = createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1m', store })
    const [key] = limiter.rules.map((rule) => redisKeyOf(rule, 'odd-number'))
    for (const odd of [-1, 0.5, Number.POSITIVE_INFINITY, Number.NaN]) {
      const value = Buffer.alloc(24)
      value.writeDoubleLE(Date.now() + 60_000, 0) // expires in a minute
      value.writeDoubleLE(odd, 8)
      value.writeDoubleLE(1, 16)
      await client.set(key as string, value, 'PX', 60_000)
      await expect(limiter.consume('odd-number')).rejects.toBeInstanceOf(StoreKeyError)
    }
  })
})

describe('time and expiry', () => {
  test('a 250 ms window on the Redis clock', async () => {
    const limiter = createLimiter({
      algorithm: 'fixed-window',
      limit: 2,
      window: '250ms',
      store: new RedisStore({ client }),
    })
    const decisions = [await limiter.consume('fast'), await limiter.consume('fast'), await limiter.consume('fast')]
    const rejected = decisions.find((d) => !d.allowed)
    // Three calls take far less than 250 ms, unless they straddle a window boundary.
    if (rejected !== undefined) {
      expect(rejected.retryAfterMs).toBeGreaterThan(0)
      expect(rejected.retryAfterMs).toBeLessThanOrEqual(250)
    }
    for (const d of decisions) expect(d.resetMs).toBeLessThanOrEqual(250)
    expect(decisions.filter((d) => d.allowed).length).toBeGreaterThanOrEqual(2)
  })

  test('after a run every key has a TTL: the time until its state is a new key state', async () => {
    const algorithms = ['fixed-window', 'sliding-log', 'token-bucket', 'leaky-bucket'] as const
    for (const algorithm of algorithms) {
      const limiter = createLimiter({ algorithm, limit: 5, window: '1m', store: new RedisStore({ client }) })
      // The slowest round trip so far per key: a rejection answered by the local short-circuit is aged from the
      // sending of the call it remembers, not from the script's instant, so its resetMs errs early by up to a trip.
      const slowestMs = new Map<string, number>()
      for (let i = 0; i < 40; i++) {
        const userKey = `ttl:${i % 7}`
        const sentAt = performance.now()
        const decision = await limiter.consume(userKey, 1 + (i % 2))
        const [key] = limiter.rules.map((rule) => redisKeyOf(rule, userKey))
        const ttl = await client.pttl(key as string)
        const elapsedMs = performance.now() - sentAt
        slowestMs.set(userKey, Math.max(slowestMs.get(userKey) ?? 0, elapsedMs))
        expect(ttl).toBeGreaterThan(0)
        // The key lives exactly as long as the state matters: the script's TIME is floored to the ms, Redis's own
        // expiry clock is not, the time from the script to the PTTL call (long on a busy machine) is gone, and a
        // window rewritten in place keeps the absolute expiry (PEXPIREAT) an earlier call set, a millisecond more.
        const earlyMs = decision.allowed ? 0 : (slowestMs.get(userKey) as number)
        expect(ttl).toBeLessThanOrEqual(decision.resetMs + Math.ceil(earlyMs) + 2)
        expect(ttl).toBeGreaterThanOrEqual(decision.resetMs - Math.ceil(elapsedMs) - 3)
      }
    }
    expect(await stateKeys()).toHaveLength(28)
    // Those 28 and the registries: one per algorithm's key space, and the leaky bucket's queue (`schedule`).
    const keys = await client.keys('*')
    expect(keys).toHaveLength(33)
    for (const key of keys) expect(await client.pttl(key)).toBeGreaterThan(0)
  })

  test('a sliding window key lives until the end of the window after its last charge: each charge writes in place', async () => {
    const windowMs = 60_000
    const limiter = createLimiter({
      algorithm: 'sliding-window',
      limit: 5,
      window: windowMs,
      store: new RedisStore({ client }),
    })
    await limiter.peek('ttl:0') // binds the rule (one EVAL registers it), then count the writes from here
    await client.config('RESETSTAT')
    for (let i = 0; i < 40; i++) {
      const userKey = `ttl:${i % 7}`
      const decision = await limiter.consume(userKey, 1 + (i % 2))
      const key = redisKeyOf(limiter.rules[0] as CompiledRule, userKey)
      const [expiresAt, [seconds, micros]] = await Promise.all([
        client.call('PEXPIRETIME', key) as Promise<number>,
        client.time(),
      ])
      const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
      // On a window's boundary (the windows are whole multiples of 1 minute of Redis's clock), the end of the window
      // after the one that holds the last charge: later than the state matters, by less than a window.
      expect(expiresAt % windowMs).toBe(0)
      expect(expiresAt - redisNow).toBeLessThanOrEqual(2 * windowMs)
      expect(expiresAt - redisNow).toBeGreaterThan(windowMs)
      if (decision.allowed) expect(expiresAt - redisNow).toBeGreaterThanOrEqual(decision.resetMs - 50)
    }
    // Seven keys, each written with SET once (its first charge) and in place (SETRANGE) from then on, keeping its
    // expiry, unless a key's window ended meanwhile.
    const stats = await commandCalls()
    expect(stats['set'] ?? 0).toBeLessThanOrEqual(7 + 7)
    expect(stats['setrange'] ?? 0).toBeGreaterThan(0)
  })

  test('a sliding window state expires when its estimate is 0 for good, though its key lives on', async () => {
    let now = 1_000_000
    const options = { algorithm: 'sliding-window', limit: 5, window: 1_000 } as const
    const store = replayStore({ client, clock: () => now, shortCircuitMaxKeys: 0 })
    const fromRedis = createLimiter({ ...options, store })
    const fromMemory = createLimiter({ ...options, store: new MemoryStore({ clock: () => now }) })
    const same = async (run: (limiter: typeof fromRedis) => Promise<unknown>) =>
      expect(await run(fromRedis)).toEqual(await run(fromMemory))
    // Three charged in the window from 1 000 000: the estimate is 0 for good from 1 001 667 (floor(3 * 333 / 1000)),
    // while its key holds 1 002 000, the end of the next window, as when it expires.
    await same((l) => l.consume('k', 3))
    now = 1_001_666
    await same((l) => l.peek('k'))
    expect((await fromRedis.peek('k')).remaining).toBe(4)
    now = 1_001_667
    await same((l) => l.peek('k'))
    expect((await fromRedis.peek('k')).remaining).toBe(5)
    // The clock steps back into the window of the charge: memory forgot the state at its reset, and so does Redis.
    now = 1_000_200
    await same((l) => l.consume('k', 5))

    // A key an earlier version wrote holds its state's own expiry (here 1 001 667 again): read the same way.
    const key = redisKeyOf(fromRedis.rules[0] as CompiledRule, 'earlier')
    const value = Buffer.alloc(32)
    for (const [i, n] of [1_001_667, 1_000_000, 0, 3].entries()) value.writeDoubleLE(n, 8 * i)
    await client.set(key, value, 'PX', 3_600_000)
    await fromMemory.consume('earlier', 3) // memory's state, as of the same charge (now is 1 000 200)
    now = 1_001_666
    await same((l) => l.peek('earlier'))
    now = 1_001_667
    await same((l) => l.peek('earlier'))
    now = 1_000_300
    await same((l) => l.consume('earlier', 5))
  })

  test("a blocked sliding window's state, written when the clock stepped back, holds its block's instant", async () => {
    let now = 1_000_000
    const store = replayStore({ client, clock: () => now, shortCircuitMaxKeys: 0 })
    const limiter = createLimiter({ algorithm: 'sliding-window', limit: 2, window: 1_000, block: 60_000, store })
    const key = redisKeyOf(limiter.rules[0] as CompiledRule, 'blocked')
    const keyExpiresAt = async () => ((await client.getBuffer(key)) as Buffer).readDoubleLE(0)
    await limiter.consume('blocked', 2)
    expect((await limiter.consume('blocked')).allowed).toBe(false) // blocked until 1 060 000
    // A charge's key expires at the end of the window after its own, an instant the window's states share.
    expect(await keyExpiresAt()).toBe(1_002_000)
    // The clock steps back by a second: the key's time stays at 1 000 000, 1 000 ms ahead, which is a new state to
    // write, and it is blocked: kept until the block ends by the key's time (1 060 000 + 1 000 ahead), as MemoryStore
    // keeps it, not until the end of its window's next window.
    now = 999_000
    const blocked = await limiter.consume('blocked')
    expect(blocked.allowed).toBe(false)
    expect(await keyExpiresAt()).toBe(1_061_000)
    // Past that window's end, the block still holds, and the state with it.
    now = 1_003_000
    expect((await limiter.consume('blocked')).allowed).toBe(false)
    expect(await client.exists(key)).toBe(1)
  })

  test('every key of a stacked request gets its expiry, not only the first', async () => {
    const limiter = createLimiter({
      rules: [
        { name: 'second', algorithm: 'fixed-window', limit: 5, window: '1s' },
        { name: 'minute', algorithm: 'sliding-log', limit: 50, window: '1m' },
        { name: 'hour', algorithm: 'token-bucket', limit: 500, window: '1h' },
      ],
      store: new RedisStore({ client }),
    })
    const keys = ['user:1', 'tenant:1', 'all']
    const redisKeys = limiter.rules.map((rule, i) => redisKeyOf(rule, keys[i] as string))
    const ttls = () => Promise.all(redisKeys.map((key) => client.pttl(key)))
    const decision = await limiter.consume(keys, 2)
    expect(decision.allowed).toBe(true)
    const afterConsume = await ttls()
    for (const [i, ttl] of afterConsume.entries()) {
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual((decision.rules?.[i]?.resetMs ?? 0) + 2)
    }
    // A refund writes every key again, each with its expiry.
    await limiter.refund(keys, 1)
    for (const ttl of await ttls()) expect(ttl).toBeGreaterThan(0)
  })

  test('keys disappear once their state has expired', async () => {
    const limiter = createLimiter({
      limit: 5,
      window: '250ms',
      algorithm: 'sliding-log',
      store: new RedisStore({ client }),
    })
    await limiter.consume('short-lived')
    expect(await stateKeys()).toHaveLength(1)
    const ttl = await client.pttl(redisKeyOf(limiter.rules[0] as CompiledRule, 'short-lived'))
    expect(ttl).toBeLessThanOrEqual(250)
    // Redis deletes it on its own clock; wait for that event, bounded well above the 250 ms.
    const deadline = Date.now() + 3000
    while ((await stateKeys()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(await stateKeys()).toEqual([])
  })
})

describe('keys', () => {
  const oddKeys = [
    '{',
    '}',
    '{}',
    '{a}',
    'a}',
    'a b',
    'line\nbreak',
    'ключ',
    '🔑',
    '%7B',
    '%',
    ':',
    '',
    'k'.repeat(10_240),
  ]

  test('odd keys work and never share state', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m', store: new RedisStore({ client }) })
    for (const key of oddKeys) expect((await limiter.consume(key)).allowed).toBe(true)
    for (const key of oddKeys) expect((await limiter.consume(key)).allowed).toBe(false)
    expect(await stateKeys()).toHaveLength(oddKeys.length)
  })

  test('a 15 KB key costs Redis no more than a short one: long keys are kept by their SHA-256', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m', store: new RedisStore({ client }) })
    const long = 'k'.repeat(15_360)
    expect((await limiter.consume(long)).allowed).toBe(true)
    expect((await limiter.consume(`${long}!`)).allowed).toBe(true)
    expect((await limiter.consume(long)).allowed).toBe(false)
    const stored = await stateKeys()
    expect(stored).toHaveLength(2)
    for (const key of stored) {
      expect(key.length).toBeLessThan(160)
      expect(Number(await client.memory('USAGE', key))).toBeLessThan(400)
    }
  })

  test('the key encoding is injective over prefix, rule and user key', () => {
    const rule = (prefix: string, name: string) =>
      createLimiter({ prefix, name, limit: 1, window: 1000 }).rules[0] as CompiledRule
    const part = fc.string({ unit: fc.constantFrom('a', ':', '{', '}', '%', '7', 'B', ' ', '\n', 'é') })
    const name = fc.constantFrom('a', 'b', 'a.b', 'a-b')
    fc.assert(
      fc.property(part.filter(Boolean), name, part, part.filter(Boolean), name, part, (p1, n1, k1, p2, n2, k2) => {
        const same = redisKeyOf(rule(p1, n1), k1) === redisKeyOf(rule(p2, n2), k2)
        expect(same).toBe(p1 === p2 && n1 === n2 && k1 === k2)
      }),
      { numRuns: 3000 },
    )
  })

  test("every key's hash tag is exactly its escaped user key, so one user key's rules share a slot", () => {
    const rules = createLimiter({
      rules: [
        { name: 'a', limit: 1, window: 1000 },
        { name: 'b', limit: 1, window: 1000, algorithm: 'token-bucket' },
      ],
      prefix: 'p{x}',
    }).rules
    for (const key of oddKeys.slice(0, -1)) {
      const [a, b] = rules.map((rule) => redisKeyOf(rule, key))
      const tag = (k: string) => k.slice(k.indexOf('{') + 1, k.indexOf('}', k.indexOf('{') + 1))
      expect(tag(a as string)).toBe(tag(b as string))
      expect(tag(a as string)).toBe(key.replace(/%/g, '%25').replace(/\{/g, '%7B').replace(/\}/g, '%7D'))
    }
  })
})

test('close() ends the store', async () => {
  const store = new RedisStore({ client })
  const limiter = createLimiter({ limit: 1, window: '1m', store })
  await limiter.consume('closing')
  store.close()
  await expect(limiter.consume('closing')).rejects.toThrow('closed')
})
