// What a subscriber of sluice:decision and sluice:store gets from a limiter on the memory store, and that nothing is
// built for the events while nobody subscribes.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import {
  createLimiter,
  type DecisionEvent,
  InvalidOptionError,
  keyHash,
  type RuleOptions,
  type StoreEvent,
  type StoreRequestFailedEvent,
} from '../../src/index'
import {
  type BoundStore,
  type CompiledRule,
  type Decision,
  type DecisionTrace,
  MemoryStore,
  type Store,
  StoreKeyError,
  StoreUnavailableError,
} from '../../src/store-index'

/** Collects what is published on `name` while `work` runs. */
async function collect<T>(name: string, work: () => Promise<unknown>): Promise<T[]> {
  const messages: T[] = []
  const listener = (message: unknown) => messages.push(message as T)
  subscribe(name, listener)
  try {
    await work()
  } finally {
    unsubscribe(name, listener)
  }
  return messages
}

test('each consume publishes its rule, hashed key, outcome, cost, remaining and the store latency', async () => {
  let now = 0
  const limiter = createLimiter({ limit: 2, window: '1m', store: new MemoryStore({ clock: () => now }) })
  const events = await collect<DecisionEvent>('sluice:decision', async () => {
    for (let i = 0; i < 3; i++) await limiter.consume('user:42')
    now += 1000
    await limiter.peek('user:42')
  })
  expect(events.map((e) => [e.operation, e.allowed, e.rules[0]?.remaining])).toEqual([
    ['consume', true, 1],
    ['consume', true, 0],
    ['consume', false, 0],
    ['peek', false, 0],
  ])
  const rejected = events[2] as DecisionEvent
  expect(rejected).toMatchObject({ prefix: 'sluice', rule: 'default', cost: 1, source: 'store' })
  // As a subscriber that logs it sees it (the hash is worked out when read, and serialized).
  expect(JSON.parse(JSON.stringify(rejected.rules))).toEqual([
    {
      rule: 'default',
      keyHash: keyHash('user:42'),
      allowed: false,
      limit: 2,
      remaining: 0,
      retryAfterMs: rejected.decision.retryAfterMs,
    },
  ])
  // The raw key is nowhere in the message, however a subscriber serializes it.
  expect(JSON.stringify({ ...rejected, decision: undefined })).not.toContain('user:42')
  expect(keyHash('user:42')).toMatch(/^[0-9a-f]{16}$/)
  expect(rejected.decision).toMatchObject({ allowed: false, remaining: 0 })
  expect(rejected.decision.retryAfterMs).toBeGreaterThan(0)
  expect(rejected.storeLatencyMs).toBeGreaterThanOrEqual(0)
  expect(Number.isFinite(rejected.storeLatencyMs)).toBe(true)
})

test("eventKeys: 'raw' adds each rule's key; stacked rules each report their own outcome", async () => {
  const limiter = createLimiter({
    eventKeys: 'raw',
    store: new MemoryStore({ clock: () => 0 }),
    rules: [
      { name: 'burst', limit: 1, window: '1s' },
      { name: 'sustained', limit: 10, window: '1m' },
    ],
  })
  const events = await collect<DecisionEvent>('sluice:decision', async () => {
    await limiter.consume(['ip:1', 'tenant:a'])
    await limiter.consume(['ip:1', 'tenant:a'])
  })
  expect(events.map((e) => e.rules.map((r) => [r.rule, r.key, r.allowed]))).toEqual([
    [
      ['burst', 'ip:1', true],
      ['sustained', 'tenant:a', true],
    ],
    [
      ['burst', 'ip:1', false],
      ['sustained', 'tenant:a', true],
    ],
  ])
  expect(events[1]).toMatchObject({ allowed: false, rule: 'burst' })
  expect(events[1]?.rules[1]?.keyHash).toBe(keyHash('tenant:a'))
})

test('a cost that can never fit, an enqueue and a limiter with other limits are published too', async () => {
  const limiter = createLimiter({ algorithm: 'leaky-bucket', limit: 3, window: '3s' })
  const events = await collect<DecisionEvent>('sluice:decision', async () => {
    await limiter.consume('k', 5)
    await limiter.enqueue('k')
    await limiter.withLimits({ limit: 10 }).consume('k')
  })
  expect(events.map((e) => [e.operation, e.allowed, e.cost])).toEqual([
    ['consume', false, 5],
    ['enqueue', true, 1],
    ['consume', true, 1],
  ])
  expect(events[0]?.decision.costExceedsCapacity).toBe(true)
})

test('eventKeys other than hash or raw is an InvalidOptionError naming it', () => {
  expect(() => createLimiter({ limit: 1, window: '1s', eventKeys: 'plain' as 'raw' })).toThrow(InvalidOptionError)
  expect(() => createLimiter({ limit: 1, window: '1s', eventKeys: 'plain' as 'raw' })).toThrow(/eventKeys/)
})

test("two limiters whose rules are both 'default' tell apart in events by their label (default: their prefix)", async () => {
  const api = createLimiter({ limit: 100, window: '1m', label: 'api' })
  const login = createLimiter({ limit: 5, window: '15m', label: 'login' })
  const unlabelled = createLimiter({ limit: 5, window: '1m', prefix: 'search' })
  const plain = createLimiter({ limit: 5, window: '1m' })
  const events = await collect<DecisionEvent>('sluice:decision', async () => {
    for (const limiter of [api, login, unlabelled, plain]) await limiter.consume('user:42')
  })
  expect(events.map((e) => [e.limiter, e.rule])).toEqual([
    ['api', 'default'],
    ['login', 'default'],
    ['search', 'default'],
    ['sluice', 'default'],
  ])
  const failing = createLimiter({
    limit: 5,
    window: '1m',
    label: 'api',
    store: {
      bind: (rules) => ({
        rules,
        apply: () => Promise.reject(new StoreUnavailableError('down')),
        refund: async () => {},
        reset: async () => {},
      }),
    },
  })
  const failures = await collect<StoreEvent>('sluice:store', () => failing.consume('user:42').catch(() => undefined))
  expect(failures).toEqual([expect.objectContaining({ type: 'unavailable', limiter: 'api' })])
})

test('a label that is not a non-empty string is an InvalidOptionError naming it', () => {
  expect(() => createLimiter({ limit: 1, window: '1s', label: '' })).toThrow(
    'option "label" must be a non-empty string',
  )
  expect(() => createLimiter({ limit: 1, window: '1s', label: 7 as unknown as string })).toThrow(InvalidOptionError)
})

/** A store that records the trace each apply gets and counts reads of the decisions it answers. */
function watchedStore(): { store: Store; traces: (DecisionTrace | undefined)[]; reads: () => number } {
  const inner = new MemoryStore()
  const traces: (DecisionTrace | undefined)[] = []
  let reads = 0
  const watched = (decision: Decision): Decision =>
    new Proxy(decision, {
      get(target, property, receiver) {
        // Settling a promise with the decision asks whether it is a thenable: that is no read of its fields.
        if (property !== 'then') reads++
        return Reflect.get(target, property, receiver)
      },
    })
  const store: Store = {
    bind(rules: readonly CompiledRule[]): BoundStore {
      const bound = inner.bind(rules)
      return {
        rules,
        apply: (keys, cost, charge, trace) => {
          traces.push(trace)
          return bound.apply(keys, cost, charge).then(watched)
        },
        refund: (keys, cost) => bound.refund(keys, cost),
        reset: (keys) => bound.reset(keys),
      }
    },
  }
  return { store, traces, reads: () => reads }
}

test('with nobody subscribed, no trace is made and nothing reads the decision to build a message', async () => {
  const { store, traces, reads } = watchedStore()
  const limiter = createLimiter({ limit: 5, window: '1m', store })
  await limiter.consume('a')
  await limiter.peek('a')
  expect(traces).toEqual([undefined, undefined])
  expect(reads()).toBe(0)

  // The same limiter, observed: a trace per call, and the message reads the decision.
  const events = await collect<DecisionEvent>('sluice:decision', () => limiter.consume('a'))
  expect(events).toHaveLength(1)
  expect(traces[2]).toEqual({ source: 'store' })
  expect(reads()).toBeGreaterThan(0)

  // Unsubscribed again: quiet again.
  const before = reads()
  await limiter.consume('a')
  expect(traces[3]).toBeUndefined()
  expect(reads()).toBe(before)
})

test('a store that says its answer came from a fallback is published with that source', async () => {
  const inner = new MemoryStore()
  const store: Store = {
    bind(rules) {
      const bound = inner.bind(rules)
      return {
        ...bound,
        rules,
        apply: (keys, cost, charge, trace) => {
          if (trace !== undefined) trace.source = 'fallback'
          return bound.apply(keys, cost, charge)
        },
      }
    },
  }
  const limiter = createLimiter({ limit: 5, window: '1m', store })
  const events = await collect<DecisionEvent>('sluice:decision', () => limiter.consume('a'))
  expect(events[0]?.source).toBe('fallback')
})

test("a request the store cannot decide publishes 'key-error' or 'unavailable' on sluice:store, and still fails", async () => {
  const failing = (error: (key: string) => Error): Store => ({
    bind: (rules) => ({
      rules,
      apply: (keys) => Promise.reject(error(keys[1] as string)),
      refund: async () => {},
      reset: async () => {},
    }),
  })
  const rules: RuleOptions[] = [
    { name: 'user', limit: 5, window: '1m' },
    { name: 'tenant', limit: 50, window: '1m' },
  ]
  const keyError = (key: string) => new StoreKeyError('unusable', key, 'tenant')
  const down = () => new StoreUnavailableError('down')
  const poisoned = createLimiter({ rules, store: failing(keyError), prefix: 'api' })
  const unavailable = createLimiter({ rules, store: failing(down), eventKeys: 'raw' })
  const events = await collect<StoreEvent>('sluice:store', async () => {
    await expect(poisoned.consume(['u:1', 't:1'])).rejects.toBeInstanceOf(StoreKeyError)
    await expect(unavailable.consume(['u:2', 't:2'])).rejects.toBeInstanceOf(StoreUnavailableError)
  })
  expect(events).toHaveLength(2)
  expect(events[0]).toMatchObject({ type: 'key-error', prefix: 'api', rule: 'tenant', keyHash: keyHash('t:1') })
  expect(events[0]).not.toHaveProperty('key')
  expect(events[0]).toHaveProperty('error', expect.any(StoreKeyError))
  expect(events[1]).toMatchObject({ type: 'unavailable', prefix: 'sluice', rule: 'user', key: 'u:2' })
})

describe('storeLatencyMs: how long the store took to answer, or to fail', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_750_000_000_000 })
    jest.advanceTimersByTime(1000) // performance.now() reads 1000, as in a process that has run a while
  })
  afterEach(() => jest.useRealTimers())

  /** A memory store that answers `delayMs` late, or fails then with `error`. */
  function slowStore(delayMs: number, error?: Error): Store {
    const inner = new MemoryStore()
    return {
      bind(rules) {
        const bound = inner.bind(rules)
        return {
          ...bound,
          rules,
          apply: async (keys, cost, charge) => {
            await new Promise((resolve) => setTimeout(resolve, delayMs))
            if (error !== undefined) throw error
            return bound.apply(keys, cost, charge)
          },
        }
      },
    }
  }

  test('a decision that took the store 25 ms says 25', async () => {
    const limiter = createLimiter({ limit: 5, window: '1m', store: slowStore(25) })
    const events = await collect<DecisionEvent>('sluice:decision', async () => {
      const decided = limiter.consume('a')
      await jest.advanceTimersByTimeAsync(25)
      await decided
    })
    expect(events.map((e) => e.storeLatencyMs)).toEqual([25])
  })

  test('a failure after 40 ms says 40', async () => {
    const limiter = createLimiter({ limit: 5, window: '1m', store: slowStore(40, new StoreUnavailableError('down')) })
    const events = await collect<StoreRequestFailedEvent>('sluice:store', async () => {
      const decided = expect(limiter.consume('a')).rejects.toBeInstanceOf(StoreUnavailableError)
      await jest.advanceTimersByTimeAsync(40)
      await decided
    })
    expect(events.map((e) => [e.type, e.storeLatencyMs])).toEqual([['unavailable', 40]])
  })
})

test('a subscriber of sluice:store alone gets no decision message built for nobody', async () => {
  const { store, reads } = watchedStore()
  const limiter = createLimiter({ limit: 5, window: '1m', store })
  const events = await collect<StoreEvent>('sluice:store', () => limiter.consume('a'))
  expect(events).toEqual([])
  expect(reads()).toBe(0)
})
