import {
  createConcurrencyLimiter,
  createLimiter,
  createShedder,
  InvalidOptionError,
  type ShedderOptions,
} from '@sluice/core'
import { createConcurrencyPolicy, createShedPolicy } from '@sluice/core/internal'
import { realTimers } from '../../src/protect/timers'

function optionAtFault(build: () => unknown): { option: string; message: string } {
  try {
    build()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return { option: (error as InvalidOptionError).option, message: (error as Error).message }
  }
  throw new Error('expected the options to be refused')
}

describe('shedLoad: invalid options throw at construction, naming the option', () => {
  test.each([
    ['a negative maxInFlight', { maxInFlight: -1 }, 'maxInFlight'],
    ['maxInFlight 0', { maxInFlight: 0 }, 'maxInFlight'],
    ['a fractional maxInFlight', { maxInFlight: 2.5 }, 'maxInFlight'],
    ['a missing maxInFlight', {}, 'maxInFlight'],
    ['a queue without maxWait', { maxInFlight: 8, queue: 16 }, 'maxWait'],
    ['a negative queue', { maxInFlight: 8, queue: -1, maxWait: '1s' }, 'queue'],
    ['maxWait 0', { maxInFlight: 8, maxWait: 0 }, 'maxWait'],
    ['maxWait "soon"', { maxInFlight: 8, maxWait: 'soon' }, 'maxWait'],
    ['a queueTarget of -5', { maxInFlight: 8, queueTarget: -5 }, 'queueTarget'],
    ['a queueInterval of "1 week"', { maxInFlight: 8, queueInterval: '1 week' }, 'queueInterval'],
    ['queueOrder "random"', { maxInFlight: 8, queueOrder: 'random' }, 'queueOrder'],
    ['maxEventLoopDelay "slow"', { maxInFlight: 8, maxEventLoopDelay: 'slow' }, 'maxEventLoopDelay'],
    ['adaptive "yes"', { maxInFlight: 8, adaptive: 'yes' }, 'adaptive'],
    [
      'adaptive.minInFlight above maxInFlight',
      { maxInFlight: 8, adaptive: { minInFlight: 9 } },
      'adaptive.minInFlight',
    ],
    ['adaptive.tolerance 0.5', { maxInFlight: 8, adaptive: { tolerance: 0.5 } }, 'adaptive.tolerance'],
    ['an unknown option in adaptive', { maxInFlight: 8, adaptive: { mode: 'vegas' } }, 'adaptive.mode'],
    ['retryAfter -1', { maxInFlight: 8, retryAfter: -1 }, 'retryAfter'],
    ['timers without clearTimeout', { maxInFlight: 8, timers: { now: () => 0, setTimeout: () => 0 } }, 'timers'],
    ['a misspelt option', { maxInFlight: 8, maxInflight: 9 }, 'maxInflight'],
  ])('%s', (_name, options, option) => {
    expect(optionAtFault(() => createShedder(options as unknown as ShedderOptions)).option).toBe(option)
  })

  test("another library's name points to Sluice's", () => {
    expect(optionAtFault(() => createShedder({ maxConcurrency: 8 } as unknown as ShedderOptions)).message).toContain(
      'use `maxInFlight`',
    )
  })

  test('priority, tenant and skip must be functions', () => {
    for (const option of ['priority', 'tenant', 'skip']) {
      expect(optionAtFault(() => createShedPolicy({ maxInFlight: 8, [option]: 'critical' })).option).toBe(option)
    }
  })

  test('an unknown priority name is an error naming the option, not a guess', () => {
    const shedder = createShedder({ maxInFlight: 8 })
    expect(() => shedder.admit({ priority: 'urgent' as 'critical' })).toThrow(
      /option "priority" must return 'critical', 'normal' or 'sheddable' \(got "urgent"\)/,
    )
    const policy = createShedPolicy<{ p: string }>({ maxInFlight: 8, priority: (req) => req.p as 'normal' })
    const raw = { once: () => raw, closed: false }
    expect(() => policy.handle({ p: 'high' }, raw)).toThrow(/option "priority"/)
    expect(shedder.inFlight).toBe(0)
  })

  test('queue 0 needs no maxWait', () => {
    expect(createShedder({ maxInFlight: 8, queue: 0 }).limit).toBe(8)
  })
})

describe('concurrency limits: invalid options throw at construction, naming the option', () => {
  test.each([
    ['no limit at all', {}, 'limit'],
    ['a negative limit', { limit: -1 }, 'limit'],
    ['a fractional globalLimit', { globalLimit: 1.5 }, 'globalLimit'],
    ['lease 0', { limit: 5, lease: 0 }, 'lease'],
    ['a name with a colon', { limit: 5, name: 'a:b' }, 'name'],
    ['an empty prefix', { limit: 5, prefix: '' }, 'prefix'],
    ['a store without release', { limit: 5, store: { acquire() {}, renew() {} } }, 'store'],
    ['max (another library)', { max: 5 }, 'max'],
  ])('%s', (_name, options, option) => {
    expect(optionAtFault(() => createConcurrencyLimiter(options as never)).option).toBe(option)
  })

  test.each([
    ['statusCode 200', { limit: 5, statusCode: 200 }, 'statusCode'],
    ['onError "maybe"', { limit: 5, onError: 'maybe' }, 'onError'],
    ['a key that is not a function', { limit: 5, key: 'x-api-key' }, 'key'],
    ['ipv6Subnet 200', { limit: 5, ipv6Subnet: 200 }, 'ipv6Subnet'],
    ['a misspelt option', { limit: 5, lease_ms: 100 }, 'lease_ms'],
  ])('HTTP: %s', (_name, options, option) => {
    expect(optionAtFault(() => createConcurrencyPolicy(options as never)).option).toBe(option)
  })
})

describe('the protection options read like every other option of Sluice (one set of checks)', () => {
  test.each<[string, () => unknown, string]>([
    [
      'shedLoad maxInFlight 0',
      () => createShedder({ maxInFlight: 0 }),
      'option "maxInFlight" must be a positive whole number (got 0)',
    ],
    [
      'createLimiter limit 0',
      () => createLimiter({ limit: 0, window: '1s' }),
      'option "limit" must be a positive whole number (got 0)',
    ],
    [
      'a concurrency limit of 1.5',
      () => createConcurrencyLimiter({ limit: 1.5 }),
      'option "limit" must be a positive whole number (got 1.5)',
    ],
    [
      'shedLoad options as an array',
      () => createShedder([] as never),
      'option "options" must be an object (got an array)',
    ],
    [
      'createLimiter options as an array',
      () => createLimiter([] as never),
      'option "options" must be an object (got an array)',
    ],
    [
      'a key that is not a function',
      () => createConcurrencyPolicy({ limit: 1, key: 'ip' as never }),
      'option "key" must be a function (got "ip")',
    ],
  ])('%s', (_, build, message) => {
    expect(optionAtFault(build).message).toBe(`sluice: ${message}`)
  })
})

describe('shedLoad option errors say what the option takes', () => {
  test.each<[string, unknown, string]>([
    ['options that are not an object', 'fast', 'option "options" must be an object (got "fast")'],
    [
      'a queue without maxWait',
      { maxInFlight: 8, queue: 16 },
      'option "maxWait" is required when `queue` is given: say how long a request may wait',
    ],
    [
      'queueOrder "random"',
      { maxInFlight: 8, queueOrder: 'random' },
      `option "queueOrder" must be 'fifo' or 'adaptive-lifo' (got "random")`,
    ],
    [
      'adaptive "yes"',
      { maxInFlight: 8, adaptive: 'yes' },
      'option "adaptive" must be true, false or an object (got "yes")',
    ],
    [
      'timeout (another library)',
      { maxInFlight: 8, timeout: 100 },
      'option "timeout" is not an option of shedLoad (use `maxWait`)',
    ],
  ])('%s', (_name, options, message) => {
    expect(optionAtFault(() => createShedder(options as unknown as ShedderOptions)).message).toBe(`sluice: ${message}`)
  })

  test('every shedLoad option together is accepted', () => {
    const shedder = createShedder({
      maxInFlight: 8,
      queue: 4,
      maxWait: '2s',
      queueTarget: '10ms',
      queueInterval: '200ms',
      queueOrder: 'adaptive-lifo',
      maxEventLoopDelay: '100ms',
      adaptive: { minInFlight: 2 },
      retryAfter: '3s',
      timers: realTimers,
    })
    expect(shedder.limit).toBe(4)
  })
})
