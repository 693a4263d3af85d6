// Traces of the memory-vs-Redis differential that once disagreed, replayed by seed and path so that each stays
// fixed. The random runs in differential.test.ts draw new seeds; these do not.
import { kindClient } from '../../scripts/redis-clients'
import { startRedis } from '../../scripts/redis-server'
import { differential } from './differential'

// A leaky queue (limit 1, rate 0.37/s, block 250 ms) flooded after a clock step back of 249 ms: memory answered
// retryAfterMs 2703 and Redis 2704 before a key's time stopped running backwards (issue 25 item 6).
test('regression: a leaky queue flooded after a step back of 249 ms gives the same retryAfter on both stores', async () => {
  const server = await startRedis()
  const c = await kindClient('ioredis', server.port)
  try {
    await differential(c.client, ['leaky-queue'], {
      numRuns: 200,
      maxRules: 1,
      shape: 'flood',
      seed: 1092522776,
      path: '20:34:1:0:0:1:0:14:16:18:18:25:28:27:27:33:28:28:32:33:33:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21:21',
    })
  } finally {
    c.close()
    await server.stop()
  }
}, 120_000)
