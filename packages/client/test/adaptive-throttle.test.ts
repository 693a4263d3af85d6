import {
  type AdaptiveThrottleOptions,
  ClientOptionError,
  createAdaptiveThrottle,
  type PoliteFetchOptions,
  politeFetch,
  ThrottledError,
} from '../src'
import { reply, startServer, type TestServer } from './helpers/http-server'

const servers: TestServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})
async function server(handler: Parameters<typeof startServer>[0]) {
  const started = await startServer(handler)
  servers.push(started)
  return started
}

const TARGET = 'https://api.example.com/things'

/** A throttle on a clock the test moves by hand, and a `random` the test sets. */
function manual(options: AdaptiveThrottleOptions = {}) {
  let now = 0
  let draw = 0.5
  const throttle = createAdaptiveThrottle({ clock: () => now, random: () => draw, ...options })
  const record = (accepted: number, refused: number) => {
    for (let i = 0; i < accepted; i++) throttle.record(TARGET, true)
    for (let i = 0; i < refused; i++) throttle.record(TARGET, false)
  }
  return { throttle, record, advance: (ms: number) => (now += ms), setDraw: (value: number) => (draw = value) }
}

describe('createAdaptiveThrottle', () => {
  it('refuses with probability max(0, (requests - K * accepts) / (requests + 1)), K = 2', () => {
    const { throttle, record } = manual()
    expect(throttle.refusalProbability(TARGET)).toBe(0)
    record(10, 10)
    // 20 requests, 10 accepts: 20 - 2 * 10 = 0, still nothing refused.
    expect(throttle.refusalProbability(TARGET)).toBe(0)
    record(0, 10)
    expect(throttle.refusalProbability(TARGET)).toBeCloseTo((30 - 20) / 31, 12)
    record(0, 70)
    expect(throttle.refusalProbability(TARGET)).toBeCloseTo((100 - 20) / 101, 12)
  })

  it('never refuses while the server accepts, whatever the draw', () => {
    const { throttle, record, setDraw } = manual()
    record(1000, 0)
    setDraw(0)
    expect(Array.from({ length: 100 }, () => throttle.admit(TARGET)).every(Boolean)).toBe(true)
    expect(throttle.counters).toEqual({ requests: 1000, accepts: 1000, refusedLocally: 0 })
  })

  it('refuses when the draw falls below the probability, and counts the refusal', () => {
    const { throttle, record, setDraw } = manual()
    record(0, 9) // p = 9 / 10
    setDraw(0.899)
    expect(throttle.admit(TARGET)).toBe(false)
    setDraw(0.9)
    expect(throttle.admit(TARGET)).toBe(true)
    // A refusal is not a request: the probability is the same after it.
    expect(throttle.refusalProbability(TARGET)).toBeCloseTo(0.9, 12)
    expect(throttle.counters).toEqual({ requests: 9, accepts: 0, refusedLocally: 1 })
  })

  it('recovers as the server accepts again: each accept lowers the probability, to 0 once accepts reach half', () => {
    const { throttle, record } = manual()
    record(0, 20)
    const probabilities = [throttle.refusalProbability(TARGET)]
    for (let i = 0; i < 20; i++) {
      record(1, 0)
      probabilities.push(throttle.refusalProbability(TARGET))
    }
    expect(probabilities.every((p, i) => i === 0 || p < probabilities[i - 1]! || p === 0)).toBe(true)
    expect(probabilities[19]).toBeGreaterThan(0)
    expect(probabilities[20]).toBe(0)
  })

  it('forgets what happened more than two minutes ago', () => {
    const { throttle, record, advance } = manual()
    record(0, 50)
    advance(119_000)
    expect(throttle.refusalProbability(TARGET)).toBeCloseTo(50 / 51, 12)
    advance(1000)
    expect(throttle.refusalProbability(TARGET)).toBe(0)
  })

  it('keeps one throttle per origin by default, and one for all with key: () => "all"', () => {
    const perOrigin = manual()
    perOrigin.record(0, 10)
    expect(perOrigin.throttle.refusalProbability('https://other.example/')).toBe(0)
    const shared = manual({ key: () => 'all' })
    shared.record(0, 10)
    expect(shared.throttle.refusalProbability('https://other.example/')).toBeCloseTo(10 / 11, 12)
  })

  it('takes its own K and window', () => {
    const { throttle, record, advance } = manual({ k: 1.5, windowMs: 10_000 })
    record(10, 10)
    expect(throttle.refusalProbability(TARGET)).toBeCloseTo((20 - 15) / 21, 12)
    advance(10_000)
    expect(throttle.refusalProbability(TARGET)).toBe(0)
  })

  it.each([
    [{ k: 0.5 }, 'k'],
    [{ k: Number.NaN }, 'k'],
    [{ k: Number.POSITIVE_INFINITY }, 'k'],
    [{ k: '2' }, 'k'],
    [{ windowMs: 0 }, 'windowMs'],
    [{ windowMs: -120_000 }, 'windowMs'],
    [{ random: 0.5 }, 'random'],
    [{ key: 'origin' }, 'key'],
    [{ clock: 'now' }, 'clock'],
  ])('rejects %j naming %s', (options, option) => {
    expect(() => createAdaptiveThrottle(options as AdaptiveThrottleOptions)).toThrow(ClientOptionError)
    expect(() => createAdaptiveThrottle(options as AdaptiveThrottleOptions)).toThrow(
      expect.objectContaining({ option }),
    )
  })
})

describe('politeFetch with adaptive throttling', () => {
  const noWait: PoliteFetchOptions = { sleep: async () => undefined }

  it('a first attempt refused locally never reaches the server: ThrottledError', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 200))
    const throttle = createAdaptiveThrottle({ random: () => 0 })
    for (let i = 0; i < 5; i++) throttle.record(url, false)
    const failure = politeFetch(url, undefined, { ...noWait, throttle })
    await expect(failure).rejects.toBeInstanceOf(ThrottledError)
    await expect(failure).rejects.toMatchObject({ attempts: 0, refusalProbability: 5 / 6 })
    expect(seen).toHaveLength(0)
  })

  it('a retry refused locally is not sent: the refused 503 comes back at once', async () => {
    const { url, seen } = await server((_req, res) => reply(res, 503, {}, 'unavailable'))
    // The first attempt goes (nothing recorded yet); its 503 makes p = 1/2, and a draw of 0.4 refuses the retry.
    const throttle = createAdaptiveThrottle({ random: () => 0.4 })
    const waits: number[] = []
    const res = await politeFetch(url, undefined, { sleep: async (ms) => void waits.push(ms), throttle })
    expect([res.status, await res.text(), seen.length, waits]).toEqual([503, 'unavailable', 1, []])
    expect(throttle.counters).toEqual({ requests: 1, accepts: 0, refusedLocally: 1 })
  })

  it('a retry after a network error refused locally rejects with a ThrottledError whose cause is the error', async () => {
    const closed = await startServer(() => undefined)
    await closed.close()
    const throttle = createAdaptiveThrottle({ random: () => 0 })
    const failure = politeFetch(closed.url, undefined, { ...noWait, throttle })
    await expect(failure).rejects.toMatchObject({
      name: 'ThrottledError',
      attempts: 1,
      cause: expect.objectContaining({ name: 'TypeError' }),
    })
  })

  it('counts a status in retryOn and a network error as refusals, and anything else, a 500 included, as accepts', async () => {
    const statuses = [200, 429, 500, 503, 404]
    const { url } = await server((_req, res, index) => reply(res, statuses[index]!))
    const throttle = createAdaptiveThrottle({ random: () => 0.999 })
    for (const _ of statuses) await politeFetch(url, undefined, { ...noWait, throttle, maxAttempts: 1 })
    expect(throttle.counters).toEqual({ requests: 5, accepts: 3, refusedLocally: 0 })
  })

  it.each([[{}], [{ admit: () => true, record: () => undefined }]])('rejects %j naming throttle', async (throttle) => {
    const failure = politeFetch('http://127.0.0.1:9/', undefined, { throttle } as unknown as PoliteFetchOptions)
    await expect(failure).rejects.toThrow(ClientOptionError)
    await expect(failure).rejects.toMatchObject({ option: 'throttle' })
  })
})
