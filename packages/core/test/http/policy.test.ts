import { EventEmitter } from 'node:events'
import { freezeDate } from '../../../../scripts/frozen-date'
import {
  type HttpLimitOptions,
  InvalidOptionError,
  MemoryStore,
  type Store,
  StoreKeyError,
  StoreUnavailableError,
} from '../../src'
import {
  createHttpPolicy,
  type HttpAdapter,
  type HttpVerdict,
  type RequestFacts,
  writeVerdict,
} from '../../src/internal-index'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

interface Req {
  readonly headers: Record<string, string | undefined>
}
interface Res {
  statusCode: number
  /** The Node response beneath, whose end runs refund. */
  raw: EventEmitter
}

/** How these tests' framework looks to the policy: its own onRejected, and the raw response under `raw`. */
const adapter: HttpAdapter<Res> = { ownOptions: ['onRejected'], rawResponse: (res) => res.raw }

const res = (statusCode = 200, raw = new EventEmitter()): Res => ({ statusCode, raw })

function facts(overrides: Partial<RequestFacts> = {}): RequestFacts {
  return { ip: '192.0.2.1', method: 'GET', path: '/', headers: {}, trustsProxy: () => false, ...overrides }
}

function recordingLogger() {
  const warnings: string[] = []
  const errors: string[] = []
  return { warnings, errors, warn: (m: string) => warnings.push(m), error: (m: string) => errors.push(m) }
}

function policy(options: HttpLimitOptions<Req, Res>) {
  return createHttpPolicy<Req, Res>({ logger: recordingLogger(), ...options }, adapter)
}

const req = (headers: Record<string, string> = {}): Req => ({ headers })

describe('createHttpPolicy options', () => {
  const invalid: [string, Record<string, unknown>, string][] = [
    ['limit', { limit: -1, window: '1m' }, 'option "limit" must be a positive whole number (got -1)'],
    ['window', { limit: 1, window: 'soon' }, 'option "window"'],
    ['key', { limit: 1, window: '1m', key: 'ip' }, 'option "key" must be a function (got "ip")'],
    ['cost', { limit: 1, window: '1m', cost: 0 }, 'option "cost" must be a positive whole number or a function'],
    ['skip', { limit: 1, window: '1m', skip: true }, 'option "skip" must be a function'],
    ['refund', { limit: 1, window: '1m', refund: 'failed' }, 'option "refund" must be a function'],
    ['statusCode', { limit: 1, window: '1m', statusCode: 200 }, 'option "statusCode" must be an HTTP error status'],
    ['headers', { limit: 1, window: '1m', headers: 'draft-8' }, 'option "headers"'],
    ['ipv6Subnet', { limit: 1, window: '1m', ipv6Subnet: 129 }, 'option "ipv6Subnet" must be a prefix length'],
    ['onError', { limit: 1, window: '1m', onError: 'local' }, `option "onError" must be one of 'open', 'closed'`],
    [
      'onStoreError',
      { limit: 1, window: '1m', onStoreError: 'open' },
      'option "onStoreError" is not an option of rateLimit (use `onError`)',
    ],
    ['logger', { limit: 1, window: '1m', logger: { warn() {} } }, 'option "logger" must have warn() and error()'],
    [
      'rules[1].key',
      {
        rules: [
          { name: 'a', limit: 1, window: '1m' },
          { name: 'b', limit: 1, window: '1m', key: 1 },
        ],
      },
      'option "rules[1].key"',
    ],
    ['onRejected', { limit: 1, window: '1m', onRejected: 'text' }, 'option "onRejected" must be a function'],
    ['max', { max: 5, window: '1m' }, 'option "max" is not an option of rateLimit (use `limit`)'],
    ['windowMs', { limit: 5, windowMs: 60_000 }, 'option "windowMs" is not an option of rateLimit (use `window`)'],
  ]
  it.each(invalid)('names %s', (option, options, message) => {
    let thrown: unknown
    try {
      createHttpPolicy(options as never, adapter)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError)
    expect((thrown as InvalidOptionError).option).toBe(option)
    expect((thrown as Error).message).toContain(message)
  })

  it("accepts the adapter's own options", () => {
    expect(() => createHttpPolicy({ limit: 1, window: '1m', onRejected: () => {} } as never, adapter)).not.toThrow()
  })
})

describe('createHttpPolicy', () => {
  it('keys by the reported client IP, IPv6 per /64', async () => {
    const p = policy({ limit: 2, window: '1m' })
    await p.handle(req(), res(), facts({ ip: '2001:db8::1' }))
    const second = await p.handle(req(), res(), facts({ ip: '2001:db8::2' }))
    expect(second.action === 'pass' && second.decision?.remaining).toBe(0)
  })

  it('warns once per limiter about an X-Forwarded-For it does not trust, and not at all when trusted', async () => {
    const logger = recordingLogger()
    const p = createHttpPolicy<Req, Res>({ limit: 10, window: '1m', logger }, adapter)
    const forwarded = { headers: { 'x-forwarded-for': '203.0.113.9' } }
    for (let i = 0; i < 3; i++) await p.handle(req(), res(), facts(forwarded))
    expect(logger.warnings).toHaveLength(1)
    expect(logger.warnings[0]).toContain('192.0.2.1')
    const trusting = recordingLogger()
    const q = createHttpPolicy<Req, Res>({ limit: 10, window: '1m', logger: trusting }, adapter)
    await q.handle(req(), res(), facts({ ...forwarded, trustsProxy: () => true }))
    expect(trusting.warnings).toEqual([])
  })

  it('does not warn when no rule keys by IP', async () => {
    const logger = recordingLogger()
    const p = createHttpPolicy<Req, Res>(
      { limit: 10, window: '1m', logger, key: (r) => r.headers['x-user'] ?? '' },
      adapter,
    )
    await p.handle(req(), res(), facts({ headers: { 'x-forwarded-for': '203.0.113.9' } }))
    expect(logger.warnings).toEqual([])
  })

  it('refunds after the response ends, once, when refund says so', async () => {
    let calls = 0
    const p = policy({
      limit: 1,
      window: '1m',
      refund: (_req, response) => {
        calls++
        return response.statusCode >= 500
      },
    })
    const raw = new EventEmitter()
    const first = await p.handle(req(), res(503, raw), facts())
    expect(first.action).toBe('pass')
    expect((await p.handle(req(), res(), facts())).action).toBe('reject')
    raw.emit('finish')
    raw.emit('close')
    await new Promise((resolve) => setImmediate(resolve))
    expect(calls).toBe(1)
    expect((await p.handle(req(), res(), facts())).action).toBe('pass')
    expect((await p.handle(req(), res(), facts())).action).toBe('reject')
  })

  it('keeps the cost of a response that refund does not give back', async () => {
    const p = policy({ limit: 1, window: '1m', refund: async () => false })
    const raw = new EventEmitter()
    await p.handle(req(), res(200, raw), facts())
    raw.emit('finish')
    await new Promise((resolve) => setImmediate(resolve))
    expect((await p.handle(req(), res(), facts())).action).toBe('reject')
  })

  it('a cost or key function that returns nonsense is an error naming the option, not a silent pass', async () => {
    const badCost = policy({ limit: 10, window: '1m', cost: () => 1.5 })
    await expect(badCost.handle(req(), res(), facts())).rejects.toThrow(
      'option "cost" must return a positive whole number (got 1.5)',
    )
    const badKey = policy({ limit: 10, window: '1m', key: () => undefined as unknown as string })
    await expect(badKey.handle(req(), res(), facts())).rejects.toThrow('option "key" must return a string')
  })

  it('warns when two limiters on one store would share their keys, not when each has its own name', () => {
    const store = new MemoryStore()
    const logger = recordingLogger()
    createHttpPolicy<Req, Res>({ limit: 100, window: '1m', store, logger }, adapter)
    createHttpPolicy<Req, Res>({ name: 'login', limit: 5, window: '15m', store, logger }, adapter)
    createHttpPolicy<Req, Res>({ limit: 100, window: '1m', store: new MemoryStore(), logger }, adapter)
    expect(logger.warnings).toEqual([])
    createHttpPolicy<Req, Res>({ limit: 10, window: '1m', store, logger }, adapter)
    expect(logger.warnings).toHaveLength(1)
    expect(logger.warnings[0]).toContain('"sluice:default"')
  })

  it('answers a statusCode of choice for rejections', async () => {
    const store = new MemoryStore({ clock: () => 0 })
    const p = policy({ limit: 1, window: '1m', store, statusCode: 503 })
    await p.handle(req(), res(), facts())
    const verdict = await p.handle(req(), res(), facts())
    expect(verdict.action === 'reject' && verdict.status).toBe(503)
  })

  it('answers two rejecting rules with the Retry-After of the longest wait', async () => {
    const store = new MemoryStore({ clock: () => 0 })
    const p = policy({
      algorithm: 'fixed-window',
      rules: [
        { name: 'burst', limit: 1, window: '10s' },
        { name: 'hour', limit: 1, window: '1m' },
      ],
      store,
    })
    await p.handle(req(), res(), facts())
    const verdict = await p.handle(req(), res(), facts())
    if (verdict.action !== 'reject') throw new Error(`expected a rejection, got ${verdict.action}`)
    expect(verdict.headers).toContainEqual(['Retry-After', '60'])
    expect(verdict.body).toEqual({ error: 'rate limit exceeded', retryAfter: 60 })
  })

  it('logs a store outage once, and again after the store recovered and failed anew', async () => {
    const logger = recordingLogger()
    let failing = true
    const inner = new MemoryStore()
    const store: Store = {
      bind(rules, options) {
        const bound = inner.bind(rules, options)
        return {
          rules,
          apply: (...args) => (failing ? Promise.reject(new Error('down')) : bound.apply(...args)),
          refund: (...args) => bound.refund(...args),
          reset: (...args) => bound.reset(...args),
        }
      },
    }
    const p = createHttpPolicy<Req, Res>({ limit: 100, window: '1m', logger, onError: 'open', store }, adapter)
    const once = () => p.handle(req(), res(), facts())
    for (let i = 0; i < 3; i++) expect((await once()).action).toBe('pass')
    expect(logger.errors).toHaveLength(1)
    failing = false
    await once()
    failing = true
    await once()
    expect(logger.errors).toHaveLength(2)
  })
})

describe('answering at once', () => {
  const headerOf = (verdict: HttpVerdict, name: string) =>
    verdict.action === 'skip' ? undefined : verdict.headers?.find(([field]) => field === name)?.[1]

  it('on the memory store, a verdict and not a promise; through a promise when a key is asynchronous', async () => {
    const now = policy({ limit: 1, window: '1m' })
    expect(now.handle(req(), res(), facts())).toMatchObject({ action: 'pass' })
    expect(now.handle(req(), res(), facts())).toMatchObject({ action: 'reject', status: 429 })
    const later = policy({ limit: 1, window: '1m', key: async () => 'k' })
    const first = later.handle(req(), res(), facts())
    expect(first).toBeInstanceOf(Promise)
    expect(await first).toMatchObject({ action: 'pass' })
    expect(await later.handle(req(), res(), facts())).toMatchObject({ action: 'reject', status: 429 })
  })

  it('a key or cost function that throws rejects the promise, as it did when every verdict was awaited', async () => {
    const badKey = policy({
      limit: 1,
      window: '1m',
      key: () => {
        throw new Error('no session')
      },
    })
    const verdict = badKey.handle(req(), res(), facts())
    expect(verdict).toBeInstanceOf(Promise)
    await expect(verdict).rejects.toThrow('no session')
    const badCost = policy({ limit: 1, window: '1m', cost: () => 0 })
    await expect(badCost.handle(req(), res(), facts())).rejects.toThrow('option "cost" must return')
  })

  it('a flood of rejections gets the numbers of each moment: reused header values and bodies follow the wait', () => {
    let nowMs = 0
    const store = new MemoryStore({ clock: () => nowMs })
    const user = policy({ name: 'user', algorithm: 'fixed-window', limit: 1, window: '10s', store })
    const other = policy({ name: 'other', algorithm: 'fixed-window', limit: 1, window: '1m', store })
    const seen: [string | undefined, string | undefined, string | undefined][] = []
    const send = (p: typeof user) => {
      const verdict = p.handle(req(), res(), facts()) as HttpVerdict
      const json = verdict.action === 'reject' ? verdict.json : undefined
      seen.push([headerOf(verdict, 'RateLimit'), headerOf(verdict, 'Retry-After'), json])
    }
    send(user)
    send(other)
    for (const at of [1000, 1500, 2000]) {
      nowMs = at
      send(user)
      send(other)
    }
    expect(seen).toEqual([
      ['"user";r=0;t=10', undefined, undefined],
      ['"other";r=0;t=60', undefined, undefined],
      ['"user";r=0;t=9', '9', '{"error":"rate limit exceeded","retryAfter":9}'],
      ['"other";r=0;t=59', '59', '{"error":"rate limit exceeded","retryAfter":59}'],
      ['"user";r=0;t=9', '9', '{"error":"rate limit exceeded","retryAfter":9}'],
      ['"other";r=0;t=59', '59', '{"error":"rate limit exceeded","retryAfter":59}'],
      ['"user";r=0;t=8', '8', '{"error":"rate limit exceeded","retryAfter":8}'],
      ['"other";r=0;t=58', '58', '{"error":"rate limit exceeded","retryAfter":58}'],
    ])
  })
})

describe('writeVerdict', () => {
  function record(verdict: HttpVerdict, custom: boolean) {
    const calls: string[] = []
    const result = writeVerdict(verdict, {
      next: () => calls.push('next'),
      decision: (d) => calls.push(`decision ${d.remaining}`),
      header: (name, value) => calls.push(`${name}: ${value}`),
      rejected: custom ? (d) => calls.push(`custom ${d.retryAfterMs}`) : undefined,
      send: (status, body) => calls.push(`${status} ${JSON.stringify(body)}`),
    })
    return { calls, result }
  }

  it('sets the decision and headers before going on or answering', async () => {
    const store = new MemoryStore({ clock: () => 0 })
    const p = policy({ algorithm: 'fixed-window', limit: 1, window: '1s', store, headers: 'draft-6' })
    const admitted = await p.handle(req(), res(), facts())
    expect(record(admitted, true).calls).toEqual([
      'decision 0',
      'RateLimit-Policy: 1;w=1',
      'RateLimit-Limit: 1',
      'RateLimit-Remaining: 0',
      'RateLimit-Reset: 1',
      'next',
    ])
    const rejected = await p.handle(req(), res(), facts())
    expect(record(rejected, false).calls.slice(-3)).toEqual([
      'Retry-After: 1',
      'Cache-Control: no-store',
      '429 {"error":"rate limit exceeded","retryAfter":1}',
    ])
    expect(record(rejected, true).calls.at(-1)).toBe('custom 1000')
  })

  it('leaves a store failure to the policy, not to a custom onRejected; a skip just goes on', () => {
    const unavailable: HttpVerdict = {
      action: 'reject',
      reason: 'store-unavailable',
      status: 503,
      decision: undefined,
      headers: [],
      body: { error: 'rate limiter unavailable' },
      json: '{"error":"rate limiter unavailable"}',
    }
    expect(record(unavailable, true).calls).toEqual(['503 {"error":"rate limiter unavailable"}'])
    expect(record({ action: 'skip' }, true).calls).toEqual(['next'])
  })
})

/** A store that fails with what `failure()` gives (while it gives an error), and counts as a MemoryStore otherwise. */
function failingStore(failure: () => Error | undefined): Store {
  const inner = new MemoryStore()
  return {
    bind(rules, options) {
      const bound = inner.bind(rules, options)
      return {
        rules,
        apply: (...args) => {
          const error = failure()
          return error === undefined ? bound.apply(...args) : Promise.reject(error)
        },
        refund: (...args) => bound.refund(...args),
        reset: (...args) => bound.reset(...args),
      }
    },
  }
}

describe('when the store fails (onError)', () => {
  const unavailable = { action: 'reject', reason: 'store-unavailable', status: 503 }
  const uncounted = { action: 'pass', decision: undefined, headers: [] }

  it.each<[string, 'open' | 'closed' | undefined, Error, object]>([
    ['by default a failed store answers 503', undefined, new Error('down'), unavailable],
    ["'closed' answers 503", 'closed', new Error('down'), unavailable],
    ["'open' admits uncounted", 'open', new Error('down'), uncounted],
    [
      "'open' still answers 503 to a store that chose to fail closed",
      'open',
      new StoreUnavailableError('full'),
      unavailable,
    ],
    ['a StoreKeyError is answered by onError too (closed)', 'closed', new StoreKeyError('bad', 'k', 'r'), unavailable],
    ['a StoreKeyError is answered by onError too (open)', 'open', new StoreKeyError('bad', 'k', 'r'), uncounted],
  ])('%s', async (_, onError, error, verdict) => {
    const store = failingStore(() => error)
    const p = policy({ limit: 10, window: '1m', store, ...(onError === undefined ? {} : { onError }) })
    expect(await p.handle(req(), res(), facts())).toMatchObject(verdict)
  })

  it.each<['open' | 'closed', string]>([
    ['closed', 'answered 503'],
    ['open', 'admitted uncounted'],
  ])("the outage log says what happens to requests under '%s'", async (onError, what) => {
    const logger = recordingLogger()
    const store = failingStore(() => new Error('down'))
    const p = createHttpPolicy<Req, Res>({ limit: 10, window: '1m', store, onError, logger }, adapter)
    await p.handle(req(), res(), facts())
    expect(logger.errors).toEqual([`sluice: the rate-limit store failed; until it answers, requests are ${what}`])
  })

  it("one key's unusable state is no outage: nothing logged, and a later outage is logged at once", async () => {
    const logger = recordingLogger()
    let error: Error = new StoreKeyError('unusable', 'k', 'default')
    const p = createHttpPolicy<Req, Res>({ limit: 10, window: '1m', store: failingStore(() => error), logger }, adapter)
    expect(await p.handle(req(), res(), facts())).toMatchObject({ status: 503 })
    expect(await p.handle(req(), res(), facts())).toMatchObject({ status: 503 })
    expect(logger.errors).toEqual([])
    error = new Error('down')
    await p.handle(req(), res(), facts())
    expect(logger.errors).toHaveLength(1)
  })
})

describe('skip, allowList and denyList', () => {
  type ListOptions = Pick<HttpLimitOptions<Req, Res>, 'skip' | 'allowList' | 'denyList'>

  it.each<[string, ListOptions]>([
    ['skip answers true', { skip: (r) => r.headers['x-health'] === '1' }],
    ['an async skip answers true', { skip: async (r) => r.headers['x-health'] === '1' }],
    ['the client is on the allow list', { allowList: ['192.0.2.0/24'] }],
    ['an allow list function answers true', { allowList: (r) => r.headers['x-health'] === '1' }],
  ])('%s: the request goes on uncounted', async (_, options) => {
    const store = new MemoryStore()
    const p = policy({ limit: 1, window: '1m', store, ...options } as HttpLimitOptions<Req, Res>)
    const passed = req({ 'x-health': '1' })
    for (let i = 0; i < 3; i++) expect(await p.handle(passed, res(), facts())).toEqual({ action: 'skip' })
    expect(store.size).toBe(0)
  })

  it.each<[string, ListOptions]>([
    ['skip answers false', { skip: () => false }],
    ['the client is not on the allow list', { allowList: ['198.51.100.0/24'] }],
    ['an allow list function answers false', { allowList: () => false }],
    ['the client is not on the deny list', { denyList: ['198.51.100.0/24'] }],
  ])('%s: the request is counted', async (_, options) => {
    const store = new MemoryStore({ clock: () => 0 })
    const p = policy({ limit: 1, window: '1m', store, ...options } as HttpLimitOptions<Req, Res>)
    expect(await p.handle(req(), res(), facts())).toMatchObject({ action: 'pass', decision: { remaining: 0 } })
    expect(await p.handle(req(), res(), facts())).toMatchObject({ action: 'reject', reason: 'rate-limited' })
  })

  it('the deny list wins over the allow list and skip', async () => {
    const p = policy({ limit: 1, window: '1m', denyList: ['192.0.2.1'], allowList: ['192.0.2.1'], skip: () => true })
    expect(await p.handle(req(), res(), facts())).toMatchObject({ action: 'reject', reason: 'forbidden', status: 403 })
  })
})

describe('refund', () => {
  it('is asked only about admitted requests: a rejected response gives nothing back', async () => {
    let asked = 0
    const p = policy({
      limit: 1,
      window: '1m',
      store: new MemoryStore({ clock: () => 0 }),
      refund: () => {
        asked++
        return true
      },
    })
    await p.handle(req(), res(), facts())
    const raw = new EventEmitter()
    expect(await p.handle(req(), res(429, raw), facts())).toMatchObject({ action: 'reject' })
    raw.emit('finish')
    await new Promise((resolve) => setImmediate(resolve))
    expect(asked).toBe(0)
    expect(await p.handle(req(), res(), facts())).toMatchObject({ action: 'reject' })
  })

  it('a refund function that throws is logged, and the cost is kept', async () => {
    const logger = recordingLogger()
    const failure = new Error('refund broke')
    const errors: unknown[] = []
    const p = createHttpPolicy<Req, Res>(
      {
        limit: 1,
        window: '1m',
        logger: { ...logger, error: (message: string, error?: unknown) => errors.push(message, error) },
        refund: () => {
          throw failure
        },
      },
      adapter,
    )
    const raw = new EventEmitter()
    await p.handle(req(), res(200, raw), facts())
    raw.emit('finish')
    await new Promise((resolve) => setImmediate(resolve))
    expect(errors).toEqual(['sluice: refund failed', failure])
    expect(await p.handle(req(), res(), facts())).toMatchObject({ action: 'reject' })
  })
})
