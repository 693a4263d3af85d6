// A call Redis runs past its deadline changes nothing (main.lua, 'SLUICELATE'): a call the store gave up on and a
// client delivered later (a MOVED from a master that hung and came back, a resend after a reconnect, a Redis that
// resumes and reads what waited in its socket) is never charged. The deadline is in Redis's clock, learned from the
// replies (src/redis-clock.ts).
import { type CompiledRule, createLimiter } from '@sluice/core'
import Redis from 'ioredis'
import { type RedisServer, startRedis } from '../../../scripts/redis-server'
import { Batches } from '../src/batch'
import { CallExpired } from '../src/deadlines'
import { redisKeyOf } from '../src/keys'
import { RedisClock } from '../src/redis-clock'
import { ruleSetOf } from '../src/rule-set'
import { scriptFor } from '../src/script'
import { ScriptRunner } from '../src/script-runner'

let server: RedisServer
let client: Redis
let admin: Redis

beforeAll(async () => {
  server = await startRedis({ args: ['--enable-debug-command', 'yes'] })
  client = new Redis({ host: server.host, port: server.port })
  admin = new Redis({ host: server.host, port: server.port })
})

afterAll(async () => {
  client?.disconnect()
  admin?.disconnect()
  await server?.stop()
})

beforeEach(() => client.flushdb())

const rule = createLimiter({ algorithm: 'fixed-window', limit: 100, window: '1h' }).rules[0] as CompiledRule
const ruleSet = ruleSetOf([rule])
const countOf = async (key: string) =>
  100 - ((await new ScriptRunner(client, undefined).run(ruleSet, [key], 1, 'peek'))[0]?.remaining ?? 0)

/** Redis's clock, in ms (TIME to the millisecond). */
async function redisMs(): Promise<number> {
  const [seconds, micros] = await admin.time()
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}

/** The script calls as a store makes them, counted: a client whose EVALSHA records its arguments and sends an EVAL. */
function sender() {
  const sent: (string | number)[][] = []
  const { source } = scriptFor(['fw'])
  const send: Pick<Redis, 'evalsha' | 'eval'> = {
    evalsha: (_sha: string, keyCount: number, ...keysAndArgs: (string | number)[]) => {
      sent.push(keysAndArgs.slice(keyCount))
      return client.eval(source, keyCount, ...keysAndArgs)
    },
    eval: (...args: Parameters<Redis['eval']>) => client.eval(...args),
  } as Pick<Redis, 'evalsha' | 'eval'>
  return { sent, send }
}

describe('RedisClock', () => {
  test('no deadline before a reply; then the largest offset seen (by when replies were read), plus lateMs', () => {
    const clock = new RedisClock(3000)
    expect(clock.notAfter(10)).toBe('')
    clock.sample(1_000_050, 60) // ran at 1_000_050 by Redis's clock, before its reply was read at 60: offset >= 999_990
    clock.sample(1_000_100, 150) // a reply read later after its run says less about the offset
    expect(clock.notAfter(200)).toBe(200 + 999_990 + 3000)
    clock.sample(1_000_200, 201) // a closer sample
    expect(clock.notAfter(300)).toBe(300 + 999_999 + 3000)
  })

  test('a sample older than a second gives way to the next, so a clock that steps is followed', () => {
    const clock = new RedisClock(3000)
    clock.sample(5_000_000, 0)
    clock.sample(1_000_000, 500) // smaller, and the larger one is recent: kept
    expect(clock.notAfter(600)).toBe(600 + 5_000_000 + 3000)
    clock.sample(1_000_000, 1500) // the larger one is older than a second: replaced
    expect(clock.notAfter(1600)).toBe(1600 + 998_500 + 3000)
  })

  test('a late refusal whose reply came back within lateMs is a clock step, and retakes the sample', () => {
    const clock = new RedisClock(3000)
    clock.sample(1_000_000, 0)
    expect(clock.wasStep(9_000_000, 100, 102)).toBe(true)
    expect(clock.notAfter(200)).toBe(200 + 8_999_898 + 3000)
    expect(clock.wasStep(9_010_000, 100, 3100)).toBe(false)
    expect(clock.notAfter(200)).toBe(200 + 8_999_898 + 3000) // a late call's refusal says nothing about the clocks
  })
})

test('every call carries its deadline once the clock is known, and the reply ends with the Redis time', async () => {
  const { sent, send } = sender()
  const clock = new RedisClock(3000)
  const batches = new Batches(send, false, 0, clock)
  const key = redisKeyOf(rule, 'known')
  const before = await redisMs()
  await batches.add(ruleSet, [key], 1, 'charge', '', Date.now(), undefined)
  await batches.add(ruleSet, [key], 1, 'charge', '', Date.now(), undefined)
  const after = await redisMs()
  expect(sent[0]?.[1]).toBe('')
  const deadline = Number(sent[1]?.[1])
  // 3 s after the second call was made, by Redis's clock (the same machine's clock here), never later: the clock's
  // estimate errs early, by at most the first call's round trip, which lies within [before, after] as the second call
  // does. Redis's time is read to the millisecond (1 or 2 ms for rounding), so the bounds hold however slow the
  // machine is.
  expect(deadline).toBeGreaterThanOrEqual(before + 3000 - 2)
  expect(deadline).toBeLessThanOrEqual(after + 3000 + 1)
  expect(await countOf(key)).toBe(2)
})

test('regression: a call that waited in Redis before it ran does not put the next deadlines late', async () => {
  // The first call is sent while Redis sleeps 300 ms on its connection: Redis runs it 300 ms after its send. Taken
  // from the send, that sample put every later deadline 300 ms past the 3 s after its call (a starved instance's
  // samples are like that), and a call the store had given up on at its 3 s backstop could still be run and charged.
  // Taken from when its reply was read, the deadline is never later than 3 s after the call by Redis's clock.
  const { sent, send } = sender()
  const batches = new Batches(send, false, 0, new RedisClock(3000))
  const key = redisKeyOf(rule, 'waited-in-redis')
  const sleeping = client.call('DEBUG', 'SLEEP', '0.3')
  await batches.add(ruleSet, [key], 1, 'charge', '', Date.now(), undefined)
  await sleeping
  await batches.add(ruleSet, [key], 1, 'charge', '', Date.now(), undefined)
  const after = await redisMs()
  expect(sent[0]?.[1]).toBe('')
  expect(Number(sent[1]?.[1])).toBeLessThanOrEqual(after + 3000 + 1)
  expect(await countOf(key)).toBe(2)
})

/**
 * A call that Redis runs 300 ms after it was sent, by a runner whose calls may run 50 ms after their send: Redis
 * sleeps first on the same connection, so the call waits behind the sleep whatever the machine's load. `resent` is
 * the store's answer to whether it still waits for the call.
 */
async function lateCall(key: string, resent?: () => boolean) {
  const runner = new ScriptRunner(client, undefined, false, 50)
  // The runner learns Redis's clock: the quickest of three replies bounds the offset closest.
  for (let i = 0; i < 3; i++) await runner.run(ruleSet, [redisKeyOf(rule, 'clock')], 1, 'peek')
  const sleeping = client.call('DEBUG', 'SLEEP', '0.3')
  const late = runner.run(ruleSet, [key], 1, 'charge', resent)
  return { late, sleeping }
}

test('a call Redis runs after its deadline changes nothing, and fails as a timeout would', async () => {
  const key = redisKeyOf(rule, 'late')
  const { late, sleeping } = await lateCall(key)
  await expect(late).rejects.toThrow(CallExpired)
  await expect(late).rejects.toThrow(/ms after it was sent, past its deadline: nothing was charged/)
  await expect(late).rejects.toMatchObject({ reach: 'node' })
  await sleeping
  expect(await countOf(key)).toBe(0)
})

test('regression: a call Redis ran past its deadline that is still waited for goes again, and is charged once', async () => {
  // A burst dispatched in one run, or a client that writes later (node-redis writes in setImmediate), spends the
  // deadline's wall time before Redis sees the call: Redis answered, and the store had not given up on it. That
  // refusal was taken for an outage (a 20,000-call burst on a healthy Redis: 19,168 StoreUnavailableError).
  const key = redisKeyOf(rule, 'waited')
  let resends = 0
  const { late, sleeping } = await lateCall(key, () => {
    resends++
    return true
  })
  const [outcome] = await late
  await sleeping
  expect(outcome?.allowed).toBe(true)
  expect(resends).toBe(1)
  expect(await countOf(key)).toBe(1)
})

test('a call Redis ran past its deadline that was given up on is not sent again', async () => {
  const key = redisKeyOf(rule, 'given-up')
  const { late, sleeping } = await lateCall(key, () => false)
  await expect(late).rejects.toMatchObject({ reach: 'node' })
  await sleeping
  expect(await countOf(key)).toBe(0)
})

test('a clock that stepped (a deadline the reply shows was met) is sent once more without a deadline', async () => {
  const { sent, send } = sender()
  const clock = new RedisClock(3000)
  // This instance believes Redis's clock 10 s behind what it is: the deadline it sends has passed already.
  const redisNow = Number((await admin.time())[0]) * 1000
  clock.sample(redisNow - 10_000, performance.now())
  const batches = new Batches(send, false, 0, clock)
  const key = redisKeyOf(rule, 'stepped')
  const [outcome] = await batches.add(ruleSet, [key], 1, 'charge', '', Date.now(), undefined)
  expect(outcome?.allowed).toBe(true)
  expect(sent.map((args) => typeof args[1])).toEqual(['number', 'string'])
  expect(await countOf(key)).toBe(1)
  // The refusal retook the sample: the next call's deadline is met at once.
  await batches.add(ruleSet, [key], 1, 'charge', '', Date.now(), undefined)
  expect(sent).toHaveLength(3)
  expect(await countOf(key)).toBe(2)
})
