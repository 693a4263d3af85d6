import {
  ClientOptionError,
  createRetryBudget,
  type PoliteFetchOptions,
  politeFetch,
  RetryBudgetExhaustedError,
  type RetryBudgetOptions,
  type RetryEvent,
} from '../src'
import { EPOCH, type LimitedServer, startLimitedServer } from './helpers/express-server'
import { reply, startServer, type TestServer } from './helpers/http-server'
import { VirtualTime } from './helpers/virtual-time'

const servers: (TestServer | LimitedServer)[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})
async function server(handler: Parameters<typeof startServer>[0]) {
  const started = await startServer(handler)
  servers.push(started)
  return started
}

/** A budget on a clock the test moves by hand. */
function manual(options: RetryBudgetOptions = {}) {
  let now = 0
  const budget = createRetryBudget({ clock: () => now, ...options })
  return { budget, advance: (ms: number) => (now += ms) }
}

describe('createRetryBudget', () => {
  it('grants retries up to 10% of the first attempts of the last second, then refuses', () => {
    const { budget, advance } = manual()
    for (let i = 0; i < 100; i++) {
      budget.recordRequest('https://api.example.com/things')
      advance(9)
    }
    const granted = Array.from({ length: 15 }, () => budget.tryRetry('https://api.example.com/other')).filter(Boolean)
    expect(granted).toHaveLength(10)
    expect(budget.counters).toEqual({ requests: 100, retries: 10, refusedLocally: 5 })
  })

  it('measures over a sliding second: retries come back as they leave the window, with new first attempts', () => {
    const { budget, advance } = manual({ minRetriesPerSecond: 0 })
    const target = 'https://api.example.com/'
    for (let i = 0; i < 20; i++) budget.recordRequest(target)
    expect([budget.tryRetry(target), budget.tryRetry(target), budget.tryRetry(target)]).toEqual([true, true, false])
    // A second later the 20 first attempts and both retries have left the window: nothing to share from.
    advance(1000)
    expect(budget.tryRetry(target)).toBe(false)
    for (let i = 0; i < 10; i++) budget.recordRequest(target)
    expect([budget.tryRetry(target), budget.tryRetry(target)]).toEqual([true, false])
  })

  it('has a floor: with no first attempts to share from, one retry in any 5 s', () => {
    const { budget, advance } = manual()
    expect(budget.tryRetry('payments-db')).toBe(true)
    advance(4999)
    expect(budget.tryRetry('payments-db')).toBe(false)
    advance(1)
    expect(budget.tryRetry('payments-db')).toBe(true)
  })

  it('keeps one budget per origin by default, and one for all with key: () => "all"', () => {
    const perOrigin = manual({ minRetriesPerSecond: 0 }).budget
    for (let i = 0; i < 10; i++) perOrigin.recordRequest('https://a.example/x')
    expect(perOrigin.tryRetry('https://a.example/y')).toBe(true)
    expect(perOrigin.tryRetry('https://b.example/x')).toBe(false)

    const shared = manual({ minRetriesPerSecond: 0, key: () => 'all' }).budget
    for (let i = 0; i < 10; i++) shared.recordRequest('https://a.example/x')
    expect(shared.tryRetry('https://b.example/x')).toBe(true)
    expect(shared.tryRetry('https://a.example/x')).toBe(false)
  })

  it('takes its own retryRatio and windowMs', () => {
    const { budget, advance } = manual({ retryRatio: 0.5, windowMs: 10_000, minRetriesPerSecond: 0 })
    for (let i = 0; i < 4; i++) {
      budget.recordRequest('k')
      advance(2000)
    }
    expect([budget.tryRetry('k'), budget.tryRetry('k'), budget.tryRetry('k')]).toEqual([true, true, false])
  })

  it.each([
    [{ retryRatio: -0.1 }, 'retryRatio'],
    [{ retryRatio: 1.5 }, 'retryRatio'],
    [{ retryRatio: Number.NaN }, 'retryRatio'],
    [{ retryRatio: '10%' }, 'retryRatio'],
    [{ minRetriesPerSecond: -1 }, 'minRetriesPerSecond'],
    [{ minRetriesPerSecond: Number.POSITIVE_INFINITY }, 'minRetriesPerSecond'],
    [{ windowMs: 0 }, 'windowMs'],
    [{ windowMs: Number.POSITIVE_INFINITY }, 'windowMs'],
    [{ key: 'origin' }, 'key'],
    [{ clock: 5 }, 'clock'],
  ])('rejects %j naming %s', (options, option) => {
    expect(() => createRetryBudget(options as RetryBudgetOptions)).toThrow(ClientOptionError)
    expect(() => createRetryBudget(options as RetryBudgetOptions)).toThrow(expect.objectContaining({ option }))
  })
})

describe('politeFetch with a retry budget', () => {
  /** Records the waits, and returns at once. */
  function recorder(options: PoliteFetchOptions) {
    const waits: number[] = []
    const settings: PoliteFetchOptions = { sleep: async (ms) => void waits.push(ms), ...options }
    return { waits, settings }
  }
  const spent = () => createRetryBudget({ retryRatio: 0, minRetriesPerSecond: 0 })

  it('a retry without budget is not sent: the refused 429 or 503 comes back at once, body intact', async () => {
    for (const status of [429, 503]) {
      const { url, seen } = await server((_req, res) => reply(res, status, { 'retry-after': '1' }, `refused ${status}`))
      const { waits, settings } = recorder({ retryBudget: spent() })
      const res = await politeFetch(url, undefined, settings)
      expect([res.status, await res.text(), seen.length, waits]).toEqual([status, `refused ${status}`, 1, []])
    }
  })

  it('after a network error with no budget left, rejects with a RetryBudgetExhaustedError whose cause is the error', async () => {
    const closed = await startServer(() => undefined)
    await closed.close()
    const budget = spent()
    const { waits, settings } = recorder({ retryBudget: budget })
    const failure = politeFetch(closed.url, undefined, settings)
    await expect(failure).rejects.toBeInstanceOf(RetryBudgetExhaustedError)
    const error = (await failure.catch((e: unknown) => e)) as RetryBudgetExhaustedError
    expect(error).toMatchObject({ attempts: 1, cause: expect.objectContaining({ name: 'TypeError' }) })
    expect(error.message).toMatch(/retry budget is spent/)
    expect(waits).toEqual([])
    expect(budget.counters).toEqual({ requests: 1, retries: 0, refusedLocally: 1 })
  })

  it('counts the retries of every cause in one budget: a 503 retry spends what a network-error retry needed', async () => {
    const { url } = await server((_req, res, index) => reply(res, index === 0 ? 503 : 200))
    const closed = await startServer(() => undefined)
    await closed.close()
    // One budget for both origins, with only the floor's one retry in any 5 s.
    const budget = createRetryBudget({ retryRatio: 0, key: () => 'all', clock: () => 0 })
    const { settings } = recorder({ retryBudget: budget })
    expect((await politeFetch(url, undefined, settings)).status).toBe(200)
    await expect(politeFetch(closed.url, undefined, settings)).rejects.toBeInstanceOf(RetryBudgetExhaustedError)
    expect(budget.counters).toEqual({ requests: 2, retries: 1, refusedLocally: 1 })
  })

  it('a quiet client (one request a minute) that meets one failure still retries, and is served', async () => {
    const time = new VirtualTime()
    const { url, seen } = await server((_req, res, index) => reply(res, index === 2 ? 503 : 200))
    const retryBudget = createRetryBudget({ clock: time.clock })
    const [result] = await time.run([
      async () => {
        const statuses: number[] = []
        for (let minute = 0; minute < 4; minute++) {
          await time.sleep(minute * 60_000 - time.now)
          const res = await politeFetch(url, undefined, { retryBudget, sleep: time.sleep, now: time.clock })
          statuses.push(res.status)
        }
        return statuses
      },
    ])
    expect(result).toEqual({ status: 'fulfilled', value: [200, 200, 200, 200] })
    expect(seen).toHaveLength(5)
    expect(retryBudget.counters).toEqual({ requests: 4, retries: 1, refusedLocally: 0 })
  })

  it('a quiet client whose retry fails too gets no second retry within 5 s: the floor is one in any 5 s', async () => {
    const time = new VirtualTime()
    const { url, seen } = await server((_req, res) => reply(res, 503))
    const retryBudget = createRetryBudget({ clock: time.clock })
    const [result] = await time.run([
      () => politeFetch(url, undefined, { retryBudget, sleep: time.sleep, now: time.clock, jitter: 'none' }),
    ])
    // The first retry waits its 500 ms backoff; the second, due 1 s later, would come 1.5 s after the first.
    expect(result).toMatchObject({ status: 'fulfilled', value: { status: 503 } })
    expect(seen).toHaveLength(2)
    expect(time.waits).toEqual([500])
  })
})

describe('a retry budget and Retry-After from @sluice/express', () => {
  it('a budgeted retry waits for Retry-After; a retry refused by a spent budget comes back at once, without waiting', async () => {
    const time = new VirtualTime()
    const limited = await startLimitedServer(time.clock, {
      algorithm: 'fixed-window',
      limit: 1,
      window: '10s',
      key: () => 'everyone',
    })
    servers.push(limited)
    // The floor's single retry is all this budget holds: three first attempts are too few for 10% to allow one.
    const retryBudget = createRetryBudget({ clock: time.clock })
    const events: RetryEvent[] = []
    const call = async () => {
      const res = await politeFetch(limited.url, undefined, {
        retryBudget,
        jitter: 'none',
        sleep: time.sleep,
        now: () => EPOCH + time.now,
        onRetry: (event) => events.push(event),
      })
      await res.arrayBuffer()
      return { status: res.status, at: time.now }
    }
    const [first] = await time.run([call])
    expect(first).toEqual({ status: 'fulfilled', value: { status: 200, at: 0 } })
    const results = await time.run([call, call])
    const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value : r.reason)).sort((a, b) => a.at - b.at)
    expect(outcomes).toEqual([
      { status: 429, at: 0 },
      { status: 200, at: 10_000 },
    ])
    expect(events.map((event) => [event.source, event.waitMs])).toEqual([['retry-after', 10_000]])
    expect(time.waits).toEqual([10_000])
    expect(limited.arrivals).toEqual([0, 0, 0, 10_000])
    expect(retryBudget.counters).toEqual({ requests: 3, retries: 1, refusedLocally: 1 })
  })
})

describe('politeFetch: the retryBudget option', () => {
  it.each([[{}], ['budget'], [{ tryRetry: () => true }]])('rejects %j naming retryBudget', async (retryBudget) => {
    const failure = politeFetch('http://127.0.0.1:9/', undefined, { retryBudget } as unknown as PoliteFetchOptions)
    await expect(failure).rejects.toThrow(ClientOptionError)
    await expect(failure).rejects.toMatchObject({ option: 'retryBudget' })
  })

  it("accepts a budget of the caller's own making, by shape", async () => {
    const { url, seen } = await server((_req, res, index) => reply(res, index < 2 ? 503 : 200))
    const asked: string[] = []
    const retryBudget = {
      recordRequest: () => undefined,
      tryRetry: (target: string | URL) => !!asked.push(String(target)),
    }
    const res = await politeFetch(url, undefined, { retryBudget, sleep: async () => undefined })
    expect([res.status, seen.length, asked]).toEqual([200, 3, [url, url]])
  })
})
