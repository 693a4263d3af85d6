import { CircuitOpenError, type CircuitState, ClientOptionError, circuitBreaker, politeFetch } from '../src'
import { reply, startServer } from './helpers/http-server'

/** A controllable clock and a breaker over tasks that succeed or fail as told. */
function setup(options: Parameters<typeof circuitBreaker<string>>[0] = {}) {
  let now = 1_000_000
  const changes: [CircuitState, CircuitState][] = []
  const breaker = circuitBreaker<string>({
    clock: () => now,
    onStateChange: (state, previous) => changes.push([previous, state]),
    ...options,
  })
  const ok = () => breaker(async () => 'ok')
  const fail = () => breaker(async () => Promise.reject(new Error('down')))
  const failTimes = async (n: number) => {
    for (let i = 0; i < n; i++) await expect(fail()).rejects.toThrow('down')
  }
  return { breaker, ok, fail, failTimes, changes, advance: (ms: number) => (now += ms) }
}

describe('circuitBreaker', () => {
  it('stays closed through 4 consecutive failures and opens on the 5th', async () => {
    const { breaker, failTimes } = setup()
    await failTimes(4)
    expect(breaker.state).toBe('closed')
    expect(breaker.failures).toBe(4)
    await failTimes(1)
    expect(breaker.state).toBe('open')
  })

  it('counts consecutive failures only: a success in between starts the count again', async () => {
    const { breaker, ok, failTimes } = setup()
    await failTimes(4)
    await ok()
    await failTimes(4)
    expect(breaker.state).toBe('closed')
  })

  it('while open, fails fast without running the task, for 30 s', async () => {
    const { breaker, failTimes, advance } = setup()
    await failTimes(5)
    let ran = false
    const refused = breaker(async () => {
      ran = true
      return 'ran'
    })
    await expect(refused).rejects.toBeInstanceOf(CircuitOpenError)
    await expect(refused).rejects.toMatchObject({ state: 'open', retryAfterMs: 30_000 })
    advance(29_999)
    await expect(breaker(async () => 'x')).rejects.toMatchObject({ retryAfterMs: 1 })
    expect(ran).toBe(false)
  })

  it('half-open after 30 s: one trial runs, concurrent calls fail fast, and a successful trial closes it', async () => {
    const { breaker, failTimes, advance, changes } = setup()
    await failTimes(5)
    advance(30_000)
    expect(breaker.state).toBe('half-open')
    let finishTrial: (value: string) => void = () => undefined
    const trial = breaker(() => new Promise<string>((resolve) => (finishTrial = resolve)))
    await expect(breaker(async () => 'second')).rejects.toMatchObject({ name: 'CircuitOpenError', state: 'half-open' })
    finishTrial('trial ok')
    await expect(trial).resolves.toBe('trial ok')
    expect(breaker.state).toBe('closed')
    expect(breaker.failures).toBe(0)
    expect(changes).toEqual([
      ['closed', 'open'],
      ['open', 'half-open'],
      ['half-open', 'closed'],
    ])
  })

  it('a failed trial opens the circuit again for another 30 s', async () => {
    const { breaker, fail, ok, failTimes, advance } = setup()
    await failTimes(5)
    advance(30_000)
    await expect(fail()).rejects.toThrow('down')
    expect(breaker.state).toBe('open')
    advance(29_999)
    await expect(ok()).rejects.toBeInstanceOf(CircuitOpenError)
    advance(1)
    await expect(ok()).resolves.toBe('ok')
    expect(breaker.state).toBe('closed')
  })

  it('gives refused calls the fallback instead of the error', async () => {
    const { failTimes, ok, fail } = setup({ fallback: (error) => `cached (${error.state})` })
    await failTimes(5)
    await expect(ok()).resolves.toBe('cached (open)')
    await expect(fail()).resolves.toBe('cached (open)')
  })

  it('counts a resolved 5xx Response as a failure by default, and a 429 not', async () => {
    const breaker = circuitBreaker<Response>({ failureThreshold: 2 })
    await breaker(async () => new Response(null, { status: 429 }))
    await breaker(async () => new Response(null, { status: 429 }))
    expect(breaker.state).toBe('closed')
    await breaker(async () => new Response(null, { status: 503 }))
    await breaker(async () => new Response(null, { status: 500 }))
    expect(breaker.state).toBe('open')
  })

  it('takes its own failureThreshold, openMs and isFailure', async () => {
    const { breaker, advance } = setup({ failureThreshold: 2, openMs: 1000, isFailure: (result) => result === 'bad' })
    await breaker(async () => 'bad')
    await breaker(async () => 'bad')
    expect(breaker.state).toBe('open')
    advance(1000)
    expect(breaker.state).toBe('half-open')
  })

  it('reset() closes it and forgets the failures', async () => {
    const { breaker, failTimes } = setup()
    await failTimes(5)
    breaker.reset()
    expect([breaker.state, breaker.failures]).toEqual(['closed', 0])
  })

  it('a call that started while closed and fails after the circuit opened does not restart the open time', async () => {
    const { breaker, failTimes, advance } = setup()
    let failLate: (error: Error) => void = () => undefined
    const late = breaker(() => new Promise<string>((_resolve, reject) => (failLate = reject)))
    await failTimes(5)
    advance(20_000)
    failLate(new Error('late'))
    await expect(late).rejects.toThrow('late')
    advance(10_000)
    expect(breaker.state).toBe('half-open')
  })

  it('a trial whose isFailure throws counts as failed and reopens: it left the breaker half-open forever', async () => {
    const classifierBug = new Error('isFailure broke')
    const { breaker, ok, failTimes, advance } = setup({
      isFailure: (result) => {
        if (result === 'odd') throw classifierBug
        return false
      },
    })
    await failTimes(5)
    advance(30_000)
    await expect(breaker(async () => 'odd')).rejects.toBe(classifierBug)
    expect(breaker.state).toBe('open')
    advance(30_000)
    await expect(ok()).resolves.toBe('ok')
    expect(breaker.state).toBe('closed')
  })

  it('reset() during a trial, then the stale trial failing, leaves the breaker closed: it reopened a healthy one', async () => {
    const { breaker, ok, failTimes, advance } = setup()
    await failTimes(5)
    advance(30_000)
    let failTrial: (error: Error) => void = () => undefined
    const trial = breaker(() => new Promise<string>((_resolve, reject) => (failTrial = reject)))
    breaker.reset()
    await expect(ok()).resolves.toBe('ok')
    failTrial(new Error('stale'))
    await expect(trial).rejects.toThrow('stale')
    expect([breaker.state, breaker.failures]).toEqual(['closed', 0])
  })

  it('calls that failed before reset() do not count after it', async () => {
    const { breaker, failTimes } = setup()
    const pending: ((error: Error) => void)[] = []
    const calls = Array.from({ length: 4 }, () =>
      breaker(() => new Promise<string>((_resolve, reject) => pending.push(reject))),
    )
    breaker.reset()
    for (const reject of pending) reject(new Error('before reset'))
    await Promise.allSettled(calls)
    await failTimes(4)
    expect([breaker.state, breaker.failures]).toEqual(['closed', 4])
  })

  it('a trial that never settles counts as failed after trialTimeoutMs (30 s): it held the breaker half-open forever', async () => {
    const { breaker, ok, failTimes, advance, changes } = setup()
    await failTimes(5)
    advance(30_000)
    let finishLate: (value: string) => void = () => undefined
    const hung = breaker(() => new Promise<string>((resolve) => (finishLate = resolve)))
    advance(29_999)
    await expect(ok()).rejects.toMatchObject({ state: 'half-open' })
    advance(1)
    // The trial is given up: the circuit is open again, for openMs from the moment the trial timed out.
    expect(breaker.state).toBe('open')
    await expect(ok()).rejects.toMatchObject({ state: 'open', retryAfterMs: 30_000 })
    // Its late success changes nothing; the next trial decides.
    finishLate('late')
    await expect(hung).resolves.toBe('late')
    expect(breaker.state).toBe('open')
    advance(30_000)
    await expect(ok()).resolves.toBe('ok')
    expect(breaker.state).toBe('closed')
    expect(changes).toEqual([
      ['closed', 'open'],
      ['open', 'half-open'],
      ['half-open', 'open'],
      ['open', 'half-open'],
      ['half-open', 'closed'],
    ])
  })

  it('takes its own trialTimeoutMs', async () => {
    const { breaker, failTimes, advance } = setup({ trialTimeoutMs: 1000 })
    await failTimes(5)
    advance(30_000)
    void breaker(() => new Promise<string>(() => undefined))
    advance(999)
    expect(breaker.state).toBe('half-open')
    advance(1)
    expect(breaker.state).toBe('open')
  })

  it.each([
    [{ failureThreshold: 0 }, 'failureThreshold'],
    [{ openMs: -1 }, 'openMs'],
    [{ openMs: Number.POSITIVE_INFINITY }, 'openMs'],
    [{ clock: 5 }, 'clock'],
    [{ fallback: 'cached' }, 'fallback'],
    [{ trialTimeoutMs: 0 }, 'trialTimeoutMs'],
    [{ trialTimeoutMs: Number.POSITIVE_INFINITY }, 'trialTimeoutMs'],
  ])('rejects %j naming %s', (options, option) => {
    expect(() => circuitBreaker(options as never)).toThrow(ClientOptionError)
    expect(() => circuitBreaker(options as never)).toThrow(expect.objectContaining({ option }))
  })

  it('around politeFetch and a failing server: after 5 failed calls the server sees no more requests', async () => {
    const { url, seen, close } = await startServer((_req, res) => reply(res, 500))
    try {
      let now = 0
      const breaker = circuitBreaker<Response>({ clock: () => now })
      const call = () => breaker(() => politeFetch(url))
      for (let i = 0; i < 5; i++) expect((await call()).status).toBe(500)
      await expect(call()).rejects.toBeInstanceOf(CircuitOpenError)
      expect(seen).toHaveLength(5)
      now += 30_000
      expect((await call()).status).toBe(500)
      expect([seen.length, breaker.state]).toEqual([6, 'open'])
    } finally {
      await close()
    }
  })
})
