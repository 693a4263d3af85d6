// concurrencyLimit's policy, as every adapter runs it: the key, the slot held until the response ends, the 429, the
// store-failure policy and the option errors.
import { EventEmitter } from 'node:events'
import { InvalidOptionError, MemoryLeaseStore, StoreUnavailableError } from '@sluice/core'
import { createConcurrencyPolicy } from '@sluice/core/internal'
import type { LeaseScope, LeaseStore } from '@sluice/core/store'
import { releaseAtEnd } from '../../src/http/response-end'

/** A raw response: emits 'finish' and 'close' as Node's does. */
class Raw extends EventEmitter {
  closed = false
}

function factsFrom(ip: string | undefined) {
  return { ip, method: 'GET', path: '/', headers: {}, trustsProxy: () => false }
}

function recordingLogger() {
  const errors: unknown[][] = []
  return { errors, logger: { warn: () => undefined, error: (...args: unknown[]) => errors.push(args) } }
}

test('a refusal is a 429 (or statusCode) with Retry-After, no-store and the reason', async () => {
  for (const [statusCode, status] of [
    [undefined, 429],
    [503, 503],
  ] as const) {
    const policy = createConcurrencyPolicy<object>({ limit: 1, ...(statusCode ? { statusCode } : {}) })
    expect(await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))).toEqual({ action: 'pass' })
    expect(await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))).toEqual({
      action: 'reject',
      status,
      headers: [
        ['Retry-After', '1'],
        ['Cache-Control', 'no-store'],
      ],
      body: { error: 'too many requests in flight', retryAfter: 1 },
    })
  }
})

test('each client address has its own slots by default; the slot is released when the response ends', async () => {
  const policy = createConcurrencyPolicy<object>({ limit: 1 })
  const first = new Raw()
  expect(await policy.handle({}, first, factsFrom('10.0.0.1'))).toEqual({ action: 'pass' })
  expect(await policy.handle({}, new Raw(), factsFrom('10.0.0.2'))).toEqual({ action: 'pass' })
  expect(policy.limiter.held).toBe(2)
  first.emit('finish')
  first.emit('close')
  expect(policy.limiter.held).toBe(1)
  expect(await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))).toEqual({ action: 'pass' })
})

test('a global-only limit counts every request together and never asks for a key', async () => {
  const policy = createConcurrencyPolicy<object>({
    globalLimit: 1,
    key: () => {
      throw new Error('a global-only limit has no key to read')
    },
  })
  expect(await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))).toEqual({ action: 'pass' })
  expect((await policy.handle({}, new Raw(), factsFrom('10.0.0.2'))).action).toBe('reject')
})

test('a key function (sync or async) picks the slots; one that returns no string is an error naming the option', async () => {
  const policy = createConcurrencyPolicy<{ key: unknown }>({ limit: 1, key: async (req) => req.key as string })
  expect((await policy.handle({ key: 'a' }, new Raw(), factsFrom(undefined))).action).toBe('pass')
  expect((await policy.handle({ key: 'b' }, new Raw(), factsFrom(undefined))).action).toBe('pass')
  expect((await policy.handle({ key: 'a' }, new Raw(), factsFrom(undefined))).action).toBe('reject')
  await expect(policy.handle({ key: 7 }, new Raw(), factsFrom(undefined))).rejects.toThrow(
    /^sluice: option "key" must return a string \(got 7\)$/,
  )
})

test('skip (sync or async) lets a request through uncounted', async () => {
  const policy = createConcurrencyPolicy<{ health: boolean }>({ limit: 1, skip: async (req) => req.health })
  expect(await policy.handle({ health: true }, new Raw(), factsFrom('10.0.0.1'))).toEqual({ action: 'pass' })
  expect(policy.limiter.held).toBe(0)
  expect(await policy.handle({ health: false }, new Raw(), factsFrom('10.0.0.1'))).toEqual({ action: 'pass' })
  expect(policy.limiter.held).toBe(1)
})

describe('a failing store', () => {
  function failingStore(error: () => Error) {
    const memory = new MemoryLeaseStore()
    const store = {
      failing: true,
      acquire: (scope: LeaseScope, key: string, holder: string) => {
        if (store.failing) throw error()
        return memory.acquire(scope, key, holder)
      },
      renew: memory.renew.bind(memory),
      release: memory.release.bind(memory),
    }
    return store
  }
  const unavailable = {
    action: 'reject',
    status: 503,
    headers: [['Cache-Control', 'no-store']],
    body: { error: 'concurrency limiter unavailable' },
  }

  test.each([
    ['closed (the default)', undefined, unavailable, 'answered 503'],
    ['open', 'open' as const, { action: 'pass' }, 'admitted uncounted'],
  ])(
    'onError %s: a store error is answered so, and logged once per outage',
    async (_name, onError, verdict, logged) => {
      const store = failingStore(() => new Error('connection reset'))
      const { errors, logger } = recordingLogger()
      const policy = createConcurrencyPolicy<object>({ limit: 5, store, logger, ...(onError ? { onError } : {}) })
      expect(await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))).toEqual(verdict)
      expect(await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))).toEqual(verdict)
      expect(errors).toEqual([
        [`sluice: the concurrency store failed; until it answers, requests are ${logged}`, expect.any(Error)],
      ])
      expect(errors[0]?.[1]).toMatchObject({ message: 'connection reset' })
      // The store answers again, then fails again: a new outage, logged again.
      store.failing = false
      expect((await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))).action).toBe('pass')
      store.failing = true
      await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))
      expect(errors).toHaveLength(2)
    },
  )

  test('a StoreUnavailableError is answered 503 even with onError open', async () => {
    const store = failingStore(() => new StoreUnavailableError('down'))
    const { errors, logger } = recordingLogger()
    const policy = createConcurrencyPolicy<object>({ limit: 5, store, logger, onError: 'open' })
    expect(await policy.handle({}, new Raw(), factsFrom('10.0.0.1'))).toEqual(unavailable)
    expect(errors[0]?.[0]).toBe('sluice: the concurrency store failed; until it answers, requests are answered 503')
  })

  test('a release that fails is logged, not thrown', async () => {
    const memory = new MemoryLeaseStore()
    const failure = new Error('release lost')
    const store: LeaseStore = {
      acquire: memory.acquire.bind(memory),
      renew: memory.renew.bind(memory),
      release: () => Promise.reject(failure),
    }
    const { errors, logger } = recordingLogger()
    const policy = createConcurrencyPolicy<object>({ limit: 5, store, logger })
    const raw = new Raw()
    await policy.handle({}, raw, factsFrom('10.0.0.1'))
    raw.emit('finish')
    await new Promise((resolve) => setImmediate(resolve))
    expect(errors).toEqual([['sluice: releasing a concurrency slot failed', failure]])
  })
})

describe('releaseAtEnd: the slot comes back exactly once, whenever the response ends', () => {
  test('at the first of finish and close', () => {
    const raw = new Raw()
    const released: string[] = []
    releaseAtEnd(raw).set(() => released.push('slot'))
    raw.emit('finish')
    raw.emit('close')
    expect(released).toEqual(['slot'])
  })

  test('at once when the response ended before the decision (a client that aborted while the store answered)', () => {
    for (const event of ['finish', 'close']) {
      const raw = new Raw()
      const released: string[] = []
      const end = releaseAtEnd(raw)
      raw.emit(event)
      end.set(() => released.push('slot'))
      raw.emit('close')
      expect(released).toEqual(['slot'])
    }
  })

  test('at once when the connection had closed before it was watched', () => {
    const raw = new Raw()
    raw.closed = true
    const released: string[] = []
    releaseAtEnd(raw).set(() => released.push('slot'))
    expect(released).toEqual(['slot'])
  })
})

describe('concurrencyLimit options: errors name the option and say what it takes', () => {
  test.each<[string, unknown, string, string]>([
    ['options as an array', [], 'options', 'must be an object (got an array)'],
    [
      'statusCode 399',
      { limit: 1, statusCode: 399 },
      'statusCode',
      'must be an HTTP error status from 400 to 599 (got 399)',
    ],
    ['statusCode 600', { limit: 1, statusCode: 600 }, 'statusCode', '(got 600)'],
    ['statusCode 429.5', { limit: 1, statusCode: 429.5 }, 'statusCode', '(got 429.5)'],
    ['onError "maybe"', { limit: 1, onError: 'maybe' }, 'onError', `must be 'open' or 'closed' (got "maybe")`],
    ['skip that is not a function', { limit: 1, skip: true }, 'skip', 'must be a function (got true)'],
    [
      'keyGenerator (another library)',
      { limit: 1, keyGenerator: () => '' },
      'keyGenerator',
      'is not an option of concurrencyLimit (use `key`)',
    ],
    ["onStoreError (rateLimit's old name)", { limit: 1, onStoreError: 'open' }, 'onStoreError', '(use `onError`)'],
    ['max (another library)', { max: 2 }, 'max', 'is not an option of concurrencyLimit (use `limit`)'],
  ])('%s', (_name, options, option, message) => {
    let refused: unknown
    try {
      createConcurrencyPolicy(options as never)
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(InvalidOptionError)
    expect((refused as InvalidOptionError).option).toBe(option)
    expect((refused as Error).message).toContain(message)
  })

  test('every option together is accepted, and statusCode may be 400 or 599', () => {
    for (const statusCode of [400, 599]) {
      const policy = createConcurrencyPolicy<object>({
        limit: 1,
        globalLimit: 2,
        lease: '10s',
        store: new MemoryLeaseStore(),
        name: 'uploads',
        prefix: 'p',
        key: () => 'k',
        skip: () => false,
        ipv6Subnet: 56,
        statusCode,
        onError: 'open',
        logger: console,
      })
      expect(policy.limiter.scope.limits).toEqual([1, 2])
    }
  })
})
