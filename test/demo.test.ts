import { ALGORITHMS, inProcess, run } from '../examples/demo/experiment'
import { startDemoServer } from '../examples/demo/http'
import { arrivalTimes, largestInAnySpan } from '../examples/demo/pattern'

describe('the burst experiment (npm run demo)', () => {
  test('has 80 arrivals, with a burst that straddles a window boundary', () => {
    const times = arrivalTimes()
    expect(times).toHaveLength(80)
    const straddling = times.filter((t) => t >= 1900 && t < 2100)
    expect(straddling.filter((t) => t < 2000).length).toBeGreaterThanOrEqual(10)
    expect(straddling.filter((t) => t >= 2000).length).toBeGreaterThanOrEqual(10)
  })

  test('shows what each algorithm lets through in any one second', async () => {
    const rows = Object.fromEntries(
      await Promise.all([...ALGORITHMS, 'leaky-queue' as const].map(async (a) => [a, await run(a, inProcess(a))])),
    )
    // The fixed window's double burst: 2L around the boundary.
    expect(rows['fixed-window'].largestInOneSecond).toBe(20)
    // The sliding log and the queue never exceed L in any second.
    expect(rows['sliding-log'].largestInOneSecond).toBe(10)
    expect(rows['leaky-queue'].largestInOneSecond).toBe(10)
    // Buckets allow B + r*T; the meter and the token bucket agree request for request.
    expect(rows['token-bucket'].largestInOneSecond).toBeLessThanOrEqual(20)
    expect(rows['leaky-bucket'].outcomes.map((o: { allowed: boolean }) => o.allowed)).toEqual(
      rows['token-bucket'].outcomes.map((o: { allowed: boolean }) => o.allowed),
    )
    expect(largestInAnySpan([0, 999, 1000])).toBe(2)
  })

  test('over HTTP through @sluice/express, every algorithm decides exactly as in process', async () => {
    const server = await startDemoServer()
    try {
      for (const algorithm of [...ALGORITHMS, 'leaky-queue' as const]) {
        const viaHttp = await run(algorithm, server.overHttp(algorithm))
        const direct = await run(algorithm, inProcess(algorithm))
        expect(viaHttp.outcomes).toEqual(direct.outcomes)
      }
      const rejected = await server.send('/fixed-window')
      expect(rejected.status).toBe(429)
      expect(rejected.headers['retry-after']).toBeDefined()
    } finally {
      await server.close()
    }
  })
})
