// NOSCRIPT (a Redis restart, SCRIPT FLUSH) is recovered by the batches alone (src/batch.ts): each batch that was
// answered NOSCRIPT goes once more as one EVAL with the script's text, every request of it is answered once, from
// Redis, and no outage is declared. test/redis/cluster.test.ts does the same on every master of a Cluster.
import { createLimiter } from '@sluice/core'
import type Redis from 'ioredis'
import { commandCalls, privateRedis } from '../../../scripts/redis-suite'
import { MAX_BATCH_REQUESTS } from '../src/batch'
import { RedisStore } from '../src/redis-store'

let client: Redis

privateRedis((redis) => ({ client } = redis), { resetEachTest: true })

const LIMIT = 1000
const USERS = 5

test('SCRIPT FLUSH between calls: a burst of three batches is reloaded by the batches, each decision answered once', async () => {
  const logger = { warn: jest.fn(), error: jest.fn(), info: jest.fn() }
  // 'closed': a request the batches did not recover would fail (StoreUnavailableError), not be answered from memory.
  const store = new RedisStore({ client, logger, onError: 'closed' })
  const limiter = createLimiter({ algorithm: 'fixed-window', limit: LIMIT, window: '1h', store })
  expect((await limiter.consume('warm')).remaining).toBe(LIMIT - 1) // the script is loaded
  await client.script('FLUSH')
  await client.config('RESETSTAT')
  const users = Array.from({ length: 2 * MAX_BATCH_REQUESTS + 8 }, (_, i) => `user:${i % USERS}`)
  let answers = 0
  const decisions = await Promise.all(
    users.map((user) =>
      limiter.consume(user).then((decision) => {
        answers++
        return decision
      }),
    ),
  )
  const calls = await commandCalls(client)
  expect(answers).toBe(users.length)
  // Three batches (16, 16, 8) went before the first EVAL reloaded the script: each was answered NOSCRIPT, and went
  // once more as an EVAL; none was sent a third time.
  expect([calls['evalsha'], calls['eval']]).toEqual([3, 3])
  // Each user's decisions were charged once each, in arrival order.
  for (let u = 0; u < USERS; u++) {
    const mine = decisions.filter((_, i) => users[i] === `user:${u}`)
    expect(mine.map((d) => d.remaining)).toEqual(mine.map((_, i) => LIMIT - 1 - i))
    expect((await limiter.peek(`user:${u}`)).remaining).toBe(LIMIT - mine.length)
  }
  expect(logger.warn).not.toHaveBeenCalled()
  expect(logger.error).not.toHaveBeenCalled()
  store.close()
})

test('SCRIPT FLUSH between two calls of stacked rules with a block: the next call reloads, the counts stay exact', async () => {
  const logger = { warn: jest.fn(), error: jest.fn() }
  const store = new RedisStore({ client, logger, onError: 'closed' })
  const limiter = createLimiter({
    store,
    rules: [
      { name: 'user', limit: 2, window: '1m', algorithm: 'sliding-window', block: '10m' },
      { name: 'all', limit: 100, window: '1h', algorithm: 'fixed-window' },
    ],
  })
  expect((await limiter.consume(['u', 'all'])).allowed).toBe(true)
  await client.script('FLUSH')
  await client.config('RESETSTAT')
  const [second, third] = await Promise.all([limiter.consume(['u', 'all']), limiter.consume(['u', 'all'])])
  expect([second?.allowed, third?.allowed]).toEqual([true, false])
  const calls = await commandCalls(client)
  expect([calls['evalsha'], calls['eval']]).toEqual([1, 1])
  // The refusal started the block: later calls are refused; 'all' counts the two admitted, not the refused one.
  const peek = await limiter.peek(['u', 'all'])
  expect(peek.allowed).toBe(false)
  expect(peek.rules?.[1]?.remaining).toBe(98)
  expect(logger.warn).not.toHaveBeenCalled()
  store.close()
})
