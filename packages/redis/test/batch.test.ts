// Decisions made in the same turn of the event loop go to Redis as one EVALSHA, decided in arrival order, each request
// all or nothing across its own rules and failing alone; a lone decision goes in the turn it was made, with no timer.
import { createLimiter, StoreKeyError } from '@sluice/core'
import type Redis from 'ioredis'
import { commandCalls, privateRedis } from '../../../scripts/redis-suite'
import { MAX_BATCH_REQUESTS } from '../src/batch'
import { redisKeyOf } from '../src/keys'
import { RedisStore } from '../src/redis-store'
import { scriptFor } from '../src/script'

let client: Redis
const quiet = { warn() {}, error() {} }

privateRedis((redis) => ({ client } = redis), { resetEachTest: true })

beforeEach(async () => {
  await client.script('LOAD', scriptFor(['fw']).source)
})

const calls = async (command: string) => (await commandCalls(client))[command] ?? 0

test('the decisions made in one turn share one EVALSHA per MAX_BATCH_REQUESTS, each answered as if alone', async () => {
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 3,
    window: '1m',
    store: new RedisStore({ client }),
  })
  // Binding sent one EVAL, the registration of the rule (see rule-registry.ts), before anything else on this
  // connection: count the decisions' commands from here.
  await client.config('RESETSTAT')
  // Four requests a user, one more user with one: MAX_BATCH_REQUESTS / 2 go first (nothing is on the wire yet), the
  // next MAX_BATCH_REQUESTS together behind it, then the last one alone.
  const users = Array.from({ length: (3 * MAX_BATCH_REQUESTS) / 2 / 4 }, (_, i) => `user:${i}`)
  const requests = [...users.flatMap((user) => [user, user, user, user]), 'last']
  const decisions = await Promise.all(requests.map((user) => limiter.consume(user)))
  expect(await calls('evalsha')).toBe(3)
  expect(await calls('eval')).toBe(0)
  // In arrival order: each user's first three are admitted (remaining 2, 1, 0), the fourth refused.
  for (let u = 0; u < users.length; u++) {
    const mine = decisions.slice(4 * u, 4 * u + 4)
    expect(mine.map((d) => d.allowed)).toEqual([true, true, true, false])
    expect(mine.map((d) => d.remaining)).toEqual([2, 1, 0, 0])
  }
  expect(decisions.at(-1)?.remaining).toBe(2)
})

test('a burst sends its requests as runs of shared arguments; a change of limiter, mode or cost mid-burst keeps order', async () => {
  const rule = { algorithm: 'fixed-window', limit: 4, window: '1m' } as const
  const store = new RedisStore({ client })
  const a = createLimiter({ ...rule, prefix: 'a', store })
  const b = createLimiter({ ...rule, prefix: 'b', store })
  const memoryA = createLimiter({ ...rule, prefix: 'a' })
  const memoryB = createLimiter({ ...rule, prefix: 'b' })
  // Bind both limiters first (each registers its rule with one call), then watch the calls of one turn.
  await Promise.all([a.peek('x'), b.peek('x')])
  const evalsha = jest.spyOn(client, 'evalsha')
  try {
    // One limiter, one mode and cost: one run, however many requests (the first call holds half a batch).
    await Promise.all(Array.from({ length: 20 }, (_, i) => a.consume(`same:${i % 3}`)))
    expect(evalsha).toHaveBeenCalledTimes(1)
    const args = evalsha.mock.calls[0] as unknown[]
    const keyCount = args[1] as number
    expect(keyCount).toBe(20)
    // The keys, extra ttl, not after, one rule set (its count and six numbers), then one run: 20, set 1, charge, 1, ''.
    expect(args.slice(2 + keyCount + 3 + 7)).toEqual([20, 1, 'charge', 1, ''])
    evalsha.mockClear()

    // Interleaved: each change starts a run, and every request is decided in arrival order, as one store in memory
    // decides them one after the other.
    type Step = [limiter: 'a' | 'b', op: 'consume' | 'peek', key: string, cost: number]
    const steps: Step[] = [
      ['a', 'consume', 'k', 1],
      ['a', 'consume', 'k', 1],
      ['a', 'consume', 'k', 2],
      ['b', 'consume', 'k', 2],
      ['a', 'peek', 'k', 1],
      ['a', 'consume', 'k', 1],
      ['b', 'consume', 'k', 1],
      ['b', 'consume', 'k', 1],
      ['a', 'consume', 'k', 1],
      ['b', 'peek', 'k', 3],
      ['b', 'consume', 'k', 1],
    ]
    const run = (pick: (name: 'a' | 'b') => typeof a) =>
      steps.map(([name, op, key, cost]) => (op === 'peek' ? pick(name).peek(key, cost) : pick(name).consume(key, cost)))
    const fromRedis = await Promise.all(run((name) => (name === 'a' ? a : b)))
    expect(evalsha).toHaveBeenCalledTimes(1)
    const expected = []
    for (const decision of run((name) => (name === 'a' ? memoryA : memoryB))) expected.push(await decision)
    const view = (d: { allowed: boolean; remaining: number }) => [d.allowed, d.remaining]
    expect(fromRedis.map(view)).toEqual(expected.map(view))
    // a: 1, 1, 2 admitted (4 used), a peek, then refused twice; b: 2, 1, 1 admitted, a peek of 3 refused, then refused.
    expect(fromRedis.map((d) => d.allowed)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      true,
      true,
      false,
      false,
      false,
    ])
  } finally {
    evalsha.mockRestore()
  }
})

test('a burst with nothing on the wire goes as two calls of half a batch: Redis decides the second meanwhile', async () => {
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 5,
    window: '1m',
    store: new RedisStore({ client }),
  })
  await client.config('RESETSTAT')
  const burst = Array.from({ length: MAX_BATCH_REQUESTS }, (_, i) => limiter.consume(`user:${i}`))
  await Promise.all(burst)
  expect(await calls('evalsha')).toBe(2)
  // Fewer than half a batch: one call, as before.
  await client.config('RESETSTAT')
  await Promise.all(Array.from({ length: MAX_BATCH_REQUESTS / 2 - 1 }, (_, i) => limiter.consume(`other:${i}`)))
  expect(await calls('evalsha')).toBe(1)
})

test('coalesce: false sends each decision as its own call, with the same answers as one batch', async () => {
  const rule = { algorithm: 'fixed-window', limit: 3, window: '1m' } as const
  const alone = createLimiter({ ...rule, prefix: 'alone', store: new RedisStore({ client, coalesce: false }) })
  const together = createLimiter({ ...rule, prefix: 'together', store: new RedisStore({ client }) })
  const burst = (limiter: typeof alone) =>
    Promise.all(['a', 'b', 'a', 'a', 'b', 'a', 'c'].map((user) => limiter.consume(user)))
  // Each binding registered its rule with one EVAL (see rule-registry.ts): count the decisions' commands from here.
  await client.config('RESETSTAT')
  const one = await burst(alone)
  expect(await calls('evalsha')).toBe(7)
  await client.config('RESETSTAT')
  const other = await burst(together)
  expect(await calls('evalsha')).toBe(1)
  expect(one.map((d) => [d.allowed, d.remaining])).toEqual(other.map((d) => [d.allowed, d.remaining]))
  // a's fourth is the one refused (limit 3).
  expect(one.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, true])
})

test('a lone decision is sent in its own turn: it needs no timer to fire', async () => {
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 3,
    window: '1m',
    store: new RedisStore({ client }),
  })
  // Timers and the clock stand still; only the event loop's own phases (and I/O) run.
  jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'hrtime', 'performance'] })
  try {
    const decision = await limiter.consume('alone')
    expect(decision.remaining).toBe(2)
  } finally {
    jest.useRealTimers()
  }
  expect(await calls('evalsha')).toBe(1)
})

test('a batch is bounded: the requests of one turn beyond the bound go in further calls', async () => {
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 1e6,
    window: '1m',
    store: new RedisStore({ client }),
  })
  const count = 2 * MAX_BATCH_REQUESTS + 10
  const decisions = await Promise.all(Array.from({ length: count }, (_, i) => limiter.consume(`k${i % 7}`)))
  expect(decisions.every((d) => d.allowed)).toBe(true)
  expect(await calls('evalsha')).toBe(3)
})

test('each request of a batch is all or nothing across its own rules, in arrival order', async () => {
  const limiter = createLimiter({
    store: new RedisStore({ client }),
    rules: [
      { name: 'user', limit: 3, window: '1m', algorithm: 'fixed-window' },
      { name: 'all', limit: 4, window: '1m', algorithm: 'fixed-window' },
    ],
  })
  const order = ['a', 'a', 'a', 'a', 'b', 'b']
  const decisions = await Promise.all(order.map((user) => limiter.consume([user, 'everyone'])))
  expect(await calls('evalsha')).toBe(1)
  // a's fourth is refused by its user rule and charges nothing, so b's first still fits in 'all'; b's second does not.
  expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, true, false])
  const after = await limiter.peek(['b', 'everyone'])
  expect((after.rules ?? []).map((r) => r.remaining)).toEqual([2, 0])
})

test('a poisoned key in a batch fails its own request only; the others are decided by Redis', async () => {
  const logger = { warn: jest.fn(), error: jest.fn() }
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 3,
    window: '1m',
    store: new RedisStore({ client, logger, onError: 'closed' }),
  })
  await client.lpush(redisKeyOf(limiter.rules[0] as (typeof limiter.rules)[0], 'mallory'), 'job')
  const users = ['alice', 'mallory', 'bob', 'alice', 'mallory', 'bob']
  const settled = await Promise.allSettled(users.map((user) => limiter.consume(user)))
  expect(await calls('evalsha')).toBe(1)
  expect(settled.map((s) => s.status)).toEqual([
    'fulfilled',
    'rejected',
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
  ])
  const failed = settled[1] as PromiseRejectedResult
  expect(failed.reason).toBeInstanceOf(StoreKeyError)
  const decided = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value.remaining)
  expect(decided).toEqual([2, 2, 1, 1])
  expect(await client.lrange(redisKeyOf(limiter.rules[0] as (typeof limiter.rules)[0], 'mallory'), 0, -1)).toEqual([
    'job',
  ])
  expect(logger.warn).not.toHaveBeenCalled()
})

test('requests of limiters with different algorithms share one call; after NOSCRIPT one EVAL reloads it', async () => {
  const store = new RedisStore({ client, logger: quiet })
  const fixed = createLimiter({ algorithm: 'fixed-window', limit: 2, window: '1m', store })
  const log = createLimiter({ name: 'log', algorithm: 'sliding-log', limit: 2, window: '1m', store })
  await client.script('FLUSH')
  await client.config('RESETSTAT')
  const decisions = await Promise.all([fixed.consume('k'), log.consume('k'), fixed.consume('k'), log.consume('k')])
  expect(decisions.map((d) => d.remaining)).toEqual([1, 1, 0, 0])
  expect(await calls('evalsha')).toBe(1)
  expect(await calls('eval')).toBe(1)
  expect(await client.script('EXISTS', scriptFor(['fw', 'sl']).sha)).toEqual([1])
})
