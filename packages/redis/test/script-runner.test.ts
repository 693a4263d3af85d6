import { type CompiledRule, createLimiter } from '@sluice/core'
import Redis from 'ioredis'
import { type RedisServer, startRedis } from '../../../scripts/redis-server'
import { redisKeyOf } from '../src/keys'
import { ruleSetOf } from '../src/rule-set'
import { ScriptRunner } from '../src/script-runner'

let server: RedisServer
let client: Redis

beforeAll(async () => {
  server = await startRedis()
  client = new Redis({ host: server.host, port: server.port })
})

afterAll(async () => {
  client?.disconnect()
  await server?.stop()
})

beforeEach(async () => {
  await client.flushdb()
  await client.script('FLUSH')
  await client.config('RESETSTAT')
})

async function calls(command: string): Promise<number> {
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(await client.info('commandstats'))
  return Number(match?.[1] ?? 0)
}

const rule = (limit: number, algorithm: 'fixed-window' | 'sliding-log' = 'fixed-window') =>
  createLimiter({ algorithm, limit, window: '1m' }).rules[0] as CompiledRule

test('one EVALSHA per call; after NOSCRIPT one EVAL loads the script, and EVALSHA works again', async () => {
  const runner = new ScriptRunner(client, undefined)
  const ruleSet = ruleSetOf([rule(3)])
  const key = redisKeyOf(rule(3), 'k')
  const remaining = []
  for (let i = 0; i < 3; i++) remaining.push((await runner.run(ruleSet, [key], 1, 'charge'))[0]?.remaining)
  expect(remaining).toEqual([2, 1, 0])
  expect(await calls('eval')).toBe(1) // the script cache was flushed before the test
  expect(await calls('evalsha')).toBe(3)
})

test('peek charges nothing, refund gives back, and a wait that never ends comes back as Infinity', async () => {
  const runner = new ScriptRunner(client, undefined)
  const ruleSet = ruleSetOf([rule(3, 'sliding-log')])
  const key = redisKeyOf(rule(3, 'sliding-log'), 'k')
  await runner.run(ruleSet, [key], 2, 'charge')
  expect((await runner.run(ruleSet, [key], 1, 'peek'))[0]?.remaining).toBe(1)
  await runner.run(ruleSet, [key], 1, 'refund')
  const [neverFits] = await runner.run(ruleSet, [key], 4, 'peek')
  expect(neverFits?.allowed).toBe(false)
  expect(neverFits?.remaining).toBe(2)
  expect(neverFits?.retryAfterMs).toBe(Number.POSITIVE_INFINITY)
})

test('a key the script cannot use is a SLUICEKEY error naming its rule, not retried as a reload', async () => {
  const runner = new ScriptRunner(client, undefined)
  const key = redisKeyOf(rule(3), 'a-hash')
  await client.hset(key, 'field', 'value') // GET on a hash: WRONGTYPE, caught inside the script
  await runner.run(ruleSetOf([rule(3)]), [redisKeyOf(rule(3), 'loaded')], 1, 'peek')
  await client.config('RESETSTAT')
  await expect(runner.run(ruleSetOf([rule(3)]), [key], 1, 'charge')).rejects.toThrow(/^SLUICEKEY 1 holds a hash$/)
  expect(await calls('eval')).toBe(0)
  expect(await client.type(key)).toBe('hash')
})

test('NOSCRIPT wrapped by ioredis Cluster in "Too many Cluster redirections" reloads the script too', async () => {
  // ioredis Cluster reports the error a command ended on after its retries as "Too many Cluster redirections. Last
  // error: ReplyError: NOSCRIPT ..." (a TRYAGAIN loop during a slot migration that ends on a node without the script).
  const wrapping = {
    evalsha: (...args: Parameters<Redis['evalsha']>) =>
      client.evalsha(...args).catch((error: Error) => {
        throw new Error(`Too many Cluster redirections. Last error: ReplyError: ${error.message}`)
      }),
    eval: (...args: Parameters<Redis['eval']>) => client.eval(...args),
  } as Pick<Redis, 'evalsha' | 'eval'>
  const runner = new ScriptRunner(wrapping, undefined)
  let replied = 0
  const resent = () => {
    replied++
    return true // the call is still waited for
  }
  const outcomes = await runner.run(ruleSetOf([rule(3)]), [redisKeyOf(rule(3), 'wrapped')], 1, 'charge', resent)
  expect(outcomes[0]?.remaining).toBe(2)
  expect(await calls('eval')).toBe(1)
  expect(replied).toBe(1) // NOSCRIPT was a reply: the connection is alive
})

test('with a replay clock the script runs at the given time, not at Redis TIME', async () => {
  let now = 1_700_000_020_000 // 40 s into a minute of the epoch
  const runner = new ScriptRunner(client, () => now)
  const ruleSet = ruleSetOf([rule(3)])
  const key = redisKeyOf(rule(3), 'replayed')
  expect((await runner.run(ruleSet, [key], 1, 'charge'))[0]?.resetMs).toBe(20_000)
  now += 19_999
  expect((await runner.run(ruleSet, [key], 1, 'charge'))[0]?.resetMs).toBe(1)
  now += 1 // the next window
  expect((await runner.run(ruleSet, [key], 1, 'charge'))[0]?.remaining).toBe(2)
})
