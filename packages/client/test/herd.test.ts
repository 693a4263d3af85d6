import { type PoliteFetchOptions, politeFetch } from '../src'
import { EPOCH, startLimitedServer } from './helpers/express-server'
import { peakInWindow, seededRandom } from './helpers/random'
import { VirtualTime } from './helpers/virtual-time'

// The thundering herd: 200 clients refused at the same instant by a real @sluice/express server (one shared
// limit of 20 requests per second). Without jitter they all come back at the same instants, in waves of 200; with
// full jitter they spread out. Measured as the most retries that reach the server in any 100 ms, on the shared
// virtual clock, so the figures are exact and the same on every run.

// Nothing here waits on the wall clock, but each case is real work: about 800 HTTP exchanges through fetch and
// Express (200 clients, up to 4 attempts each, and some 380 connections), 1 to 2.5 s of CPU on an idle core. With the
// two cores loaded (load average 25 to 35: two build loops beside the suite) a case took 15 to 30 s, against the 30 s
// of jest.config.js. The figures do not depend on how long it takes; the timeout only catches a hang.
jest.setTimeout(120_000)

const CLIENTS = 200
const WINDOW_MS = 100

interface HerdResult {
  /** The virtual times at which retries reached the server. */
  retries: number[]
  /** The most retries in any 100 ms. */
  peak: number
}

async function herd(options: PoliteFetchOptions, withRetryAfter: boolean): Promise<HerdResult> {
  const time = new VirtualTime()
  const server = await startLimitedServer(time.clock, {
    algorithm: 'fixed-window',
    limit: 20,
    window: '1s',
    key: () => 'everyone',
    headers: withRetryAfter ? 'ietf' : false,
    // Without Retry-After the clients fall back to their own backoff.
    ...(withRetryAfter
      ? {}
      : {
          onRejected: (_req, res) => {
            res.removeHeader('Retry-After')
            res.status(429).json({ error: 'rate limit exceeded' })
          },
        }),
  })
  try {
    // Spend the first second's allowance, so that every one of the 200 is refused at t = 0.
    for (let i = 0; i < 20; i++) await (await fetch(server.url)).arrayBuffer()
    const firstArrivals = server.arrivals.length
    // A request that failed on the wire would be retried on backoff and move the waves: name it, if one ever does.
    const networkErrors: string[] = []
    const results = await time.run(
      Array.from({ length: CLIENTS }, () => async () => {
        const res = await politeFetch(server.url, undefined, {
          maxAttempts: 4,
          sleep: time.sleep,
          now: () => EPOCH + time.now,
          onRetry: ({ reason, error }) => {
            if (reason === 'network-error') networkErrors.push(String((error as Error | undefined)?.cause ?? error))
          },
          ...options,
        })
        await res.arrayBuffer()
        return res.status
      }),
    )
    expect(networkErrors).toEqual([])
    // Virtual time stands still until every client has made its first attempt, so those are the first 200.
    const attempts = server.arrivals.slice(firstArrivals)
    expect(attempts.slice(0, CLIENTS).every((t) => t === 0)).toBe(true)
    const retries = attempts.slice(CLIENTS)
    expect(results.every((r) => r.status === 'fulfilled' && (r.value === 200 || r.value === 429))).toBe(true)
    return { retries, peak: peakInWindow(retries, WINDOW_MS) }
  } finally {
    await server.close()
  }
}

describe('the herd: 200 clients refused at the same instant', () => {
  it('with Retry-After and no jitter they come back in waves of the whole herd, each second', async () => {
    const { retries, peak } = await herd({ jitter: 'none' }, true)
    expect(peak).toBe(CLIENTS)
    // 200 return at 1 s; 20 get in, 180 come back at 2 s, 160 at 3 s.
    expect(countBy(retries)).toEqual({ 1000: 200, 2000: 180, 3000: 160 })
  })

  it('with Retry-After and full jitter they spread over the interval after it, never before', async () => {
    const { retries, peak } = await herd({ random: seededRandom(2026) }, true)
    expect(Math.min(...retries)).toBeGreaterThanOrEqual(1000)
    // Retry 1 spreads 200 clients over [1 s, 1.5 s]: 40 per 100 ms on average. A random spread peaks above its
    // average, but far below the whole herd (with this seed: 51).
    expect(peak).toBeLessThanOrEqual(70)
  })

  it('with backoff and no jitter (no Retry-After) they come back in waves at 0.5 s, 1.5 s, 3.5 s', async () => {
    const { retries, peak } = await herd({ jitter: 'none' }, false)
    expect(peak).toBe(CLIENTS)
    // At 0.5 s the first window is still spent; at 1.5 s 20 get in; the other 180 come back together at 3.5 s.
    expect(countBy(retries)).toEqual({ 500: 200, 1500: 200, 3500: 180 })
  })

  it('with backoff and full jitter (no Retry-After) the peak is a fraction of the herd', async () => {
    const { retries, peak } = await herd({ random: seededRandom(2026) }, false)
    expect(retries.length).toBeGreaterThan(2 * CLIENTS)
    // Retry 1 spreads over [0, 0.5 s] (40 per 100 ms on average), retry 2 over a further [0, 1 s], retry 3 over
    // [0, 2 s]; their overlap peaks above the average, far below the whole herd (with this seed: 64).
    expect(peak).toBeLessThanOrEqual(70)
  })
})

function countBy(times: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const t of times) counts[t] = (counts[t] ?? 0) + 1
  return counts
}
