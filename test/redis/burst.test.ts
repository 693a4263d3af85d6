// A burst on one key, on a healthy Redis: Redis answers the whole time, so the burst is limited exactly as a quiet
// trickle is, and no outage is declared. 20,000 consumes made in one synchronous run hold this instance's event loop
// for seconds on a loaded machine; none of that is Redis's time (see deadlines.ts). Both client libraries, each with
// the options the README recommends.
import { createLimiter, type Decision } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import { CLIENT_KINDS, type KindClient, kindClient } from '../../scripts/redis-clients'
import { type RedisServer, startRedis } from '../../scripts/redis-server'

const LIMIT = 50
const BURST = 20_000

let server: RedisServer
const figures: string[] = []

beforeAll(async () => {
  server = await startRedis()
})

afterAll(async () => {
  await server?.stop()
  if (figures.length > 0) console.log(`burst figures:\n${figures.join('\n')}`)
})

/** What each call ended with: admitted, rejected, or the error's name. */
function tally(results: PromiseSettledResult<Decision>[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const r of results) {
    const what = r.status === 'fulfilled' ? (r.value.allowed ? 'admitted' : 'rejected') : (r.reason as Error).name
    counts[what] = (counts[what] ?? 0) + 1
  }
  return counts
}

describe.each(CLIENT_KINDS)('%s', (kind) => {
  let client: KindClient
  beforeAll(async () => {
    client = await kindClient(kind, server.port)
  })
  afterAll(() => client?.close())

  // Default options decide locally once Redis is declared down (more than LIMIT admitted in all); 'closed' makes
  // every such decision visible as a StoreUnavailableError.
  test.each([
    ['default options', undefined],
    ["onError: 'closed'", 'closed'],
  ] as const)(
    'regression: 20,000 concurrent consumes on one key, %s, are decided by Redis: exactly the limit admitted, no outage',
    async (policy, onError) => {
      const lines: string[] = []
      const logger = { warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m), info: () => {} }
      const store = new RedisStore({ client: client.client, logger, ...(onError === undefined ? {} : { onError }) })
      const name = `burst-${kind}-${onError ?? 'default'}`
      const limiter = createLimiter({ name, limit: LIMIT, window: '1h', store })
      await limiter.consume('warm-up') // connects and loads the script
      const started = performance.now()
      const calls = Array.from({ length: BURST }, () => limiter.consume('one'))
      const dispatchedMs = performance.now() - started
      const counts = tally(await Promise.allSettled(calls))
      figures.push(
        `  ${kind}, ${policy}: ${JSON.stringify(counts)} (dispatched in ${dispatchedMs.toFixed(0)} ms, all answered ` +
          `after ${(performance.now() - started).toFixed(0)} ms), log: ${lines.join(' | ') || 'none'}`,
      )
      expect(counts).toEqual({ admitted: LIMIT, rejected: BURST - LIMIT })
      expect(lines).toEqual([])
      // Redis counted them: the key is full there.
      expect((await limiter.peek('one')).remaining).toBe(0)
    },
    120_000,
  )
})
