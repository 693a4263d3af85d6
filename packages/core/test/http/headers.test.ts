import fc from 'fast-check'
import { parseDictionary, parseItem, parseList } from 'structured-headers'
import { freezeDate } from '../../../../scripts/frozen-date'
import { createLimiter, type Decision, InvalidOptionError, MemoryStore } from '../../src'
import { headerModes, headerWriter, rateLimitHeaders, retryAfterSeconds } from '../../src/http/headers'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

const NOW = 1_767_225_610_000 // 10 s into a minute

function decision(overrides: Partial<Decision> = {}): Decision {
  return {
    allowed: true,
    rule: 'default',
    limit: 100,
    windowMs: 60_000,
    remaining: 42,
    resetMs: 17_200,
    retryAfterMs: 0,
    delayMs: 0,
    cost: 1,
    costExceedsCapacity: false,
    ...overrides,
  }
}

type Headers = readonly (readonly [string, string])[]
const asObject = (headers: Headers) => Object.fromEntries(headers)
const field = (headers: Headers, name: string): string => {
  const found = headers.find(([n]) => n === name)
  if (found === undefined) throw new Error(`no ${name} field`)
  return found[1]
}

describe('headerModes', () => {
  it("defaults to 'ietf'; false sends none", () => {
    expect(headerModes(undefined)).toEqual(['ietf'])
    expect(headerModes(false)).toEqual([])
    expect(headerModes(['draft-6', 'legacy'])).toEqual(['draft-6', 'legacy'])
  })

  it('names the option and the accepted values', () => {
    expect(() => headerModes('draft-8')).toThrow(InvalidOptionError)
    expect(() => headerModes('draft-8')).toThrow(
      `option "headers" must be 'ietf', 'draft-7', 'draft-6', 'legacy', false or an array of them (got "draft-8")`,
    )
    expect(() => headerModes(true)).toThrow('option "headers"')
  })

  it('refuses two modes that write the same field', () => {
    expect(() => headerModes(['ietf', 'draft-7'])).toThrow(
      "cannot combine 'ietf' and 'draft-7': both write RateLimit-Policy",
    )
    expect(() => headerModes(['draft-6', 'draft-7'])).toThrow('both write RateLimit-Policy')
  })
})

describe('rateLimitHeaders', () => {
  it("'ietf': one item per rule, in rule order, that a structured-field parser reads", () => {
    const user = decision({ rule: 'user', remaining: 42, resetMs: 17_200 })
    const tenant = decision({ rule: 'tenant', limit: 2000, windowMs: 3_600_000, remaining: 1500, resetMs: 900_000 })
    const list = rateLimitHeaders({ ...user, rules: [user, tenant] }, ['ietf'], NOW)
    const headers = asObject(list)
    expect(headers).toEqual({
      'RateLimit-Policy': '"user";q=100;w=60, "tenant";q=2000;w=3600',
      RateLimit: '"user";r=42;t=18, "tenant";r=1500;t=900',
    })
    expect(parseList(field(list, 'RateLimit-Policy'))).toEqual([
      [
        'user',
        new Map([
          ['q', 100],
          ['w', 60],
        ]),
      ],
      [
        'tenant',
        new Map([
          ['q', 2000],
          ['w', 3600],
        ]),
      ],
    ])
    expect(parseList(field(list, 'RateLimit'))).toEqual([
      [
        'user',
        new Map([
          ['r', 42],
          ['t', 18],
        ]),
      ],
      [
        'tenant',
        new Map([
          ['r', 1500],
          ['t', 900],
        ]),
      ],
    ])
  })

  it("'draft-7': a dictionary and a policy item", () => {
    const list = rateLimitHeaders(decision(), ['draft-7'], NOW)
    const headers = asObject(list)
    expect(headers).toEqual({ 'RateLimit-Policy': '100;w=60', RateLimit: 'limit=100, remaining=42, reset=18' })
    expect(parseItem(field(list, 'RateLimit-Policy'))).toEqual([100, new Map([['w', 60]])])
    expect([...parseDictionary(field(list, 'RateLimit')).keys()]).toEqual(['limit', 'remaining', 'reset'])
  })

  it("'draft-6' and 'legacy' (reset as a Unix time in seconds, rounded up)", () => {
    expect(asObject(rateLimitHeaders(decision(), ['draft-6', 'legacy'], NOW))).toEqual({
      'RateLimit-Policy': '100;w=60',
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '42',
      'RateLimit-Reset': '18',
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '42',
      'X-RateLimit-Reset': '1767225628',
    })
  })

  it('a rejected rule resets when its request would be admitted, so Retry-After is never earlier than t', () => {
    const rejected = decision({ allowed: false, remaining: 0, retryAfterMs: 2_500, resetMs: 60_000 })
    expect(field(rateLimitHeaders(rejected, ['ietf'], NOW), 'RateLimit')).toBe('"default";r=0;t=3')
    expect(retryAfterSeconds(rejected)).toBe(3)
  })

  it('a cost that can never fit reports the reset, not an infinite wait', () => {
    const never = decision({ allowed: false, retryAfterMs: Number.POSITIVE_INFINITY, costExceedsCapacity: true })
    expect(field(rateLimitHeaders(never, ['ietf'], NOW), 'RateLimit')).toBe('"default";r=42;t=18')
  })

  it('Retry-After is whole seconds rounded up, at least 1', () => {
    expect(retryAfterSeconds(decision({ allowed: false, retryAfterMs: 1 }))).toBe(1)
    expect(retryAfterSeconds(decision({ allowed: false, retryAfterMs: 1000 }))).toBe(1)
    expect(retryAfterSeconds(decision({ allowed: false, retryAfterMs: 1001 }))).toBe(2)
  })

  it('for any trace of stacked rules, Retry-After of a rejection is at least every rejecting rule t', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('fixed-window', 'sliding-log', 'sliding-window', 'token-bucket', 'leaky-bucket'),
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 5_000 }), cost: fc.integer({ min: 1, max: 4 }) }), {
          maxLength: 40,
        }),
        async (algorithm, trace) => {
          let now = NOW
          const limiter = createLimiter({
            algorithm,
            store: new MemoryStore({ clock: () => now }),
            rules: [
              { name: 'burst', limit: 5, window: '10s' },
              { name: 'hour', limit: 20, window: '1m' },
            ],
          })
          for (const { gap, cost } of trace) {
            now += gap
            const d = await limiter.consume('k', cost)
            if (d.allowed) continue
            const retryAfter = retryAfterSeconds(d)
            expect(retryAfter).toBe(Math.max(1, Math.ceil(d.retryAfterMs / 1000)))
            const items = parseList(field(rateLimitHeaders(d, ['ietf'], now), 'RateLimit'))
            items.forEach(([, params], i) => {
              if (!d.rules?.[i]?.allowed) expect(retryAfter).toBeGreaterThanOrEqual(params.get('t') as number)
            })
          }
        },
      ),
      { numRuns: 60 },
    )
  })
})

describe('headerWriter', () => {
  test('a rule whose limit or window changes between decisions gets its new RateLimit-Policy', () => {
    const write = headerWriter(['ietf', 'legacy'])
    const first = asObject(write(decision(), NOW))
    const wider = asObject(write(decision({ limit: 500, windowMs: 3_600_000 }), NOW))
    const again = asObject(write(decision(), NOW))
    expect([first['RateLimit-Policy'], wider['RateLimit-Policy'], again['RateLimit-Policy']]).toEqual([
      '"default";q=100;w=60',
      '"default";q=500;w=3600',
      '"default";q=100;w=60',
    ])
    expect([first['X-RateLimit-Limit'], wider['X-RateLimit-Limit']]).toEqual(['100', '500'])
  })

  test('stacked rules: the policy list follows whichever member changes, and each rule keeps its own', () => {
    const write = headerWriter(['ietf'])
    const user = decision({ rule: 'user', limit: 10 })
    const tenant = decision({ rule: 'tenant', limit: 1000 })
    const stacked = (rules: Decision[]): Decision => ({ ...(rules[0] as Decision), rules })
    expect(field(write(stacked([user, tenant]), NOW), 'RateLimit-Policy')).toBe(
      '"user";q=10;w=60, "tenant";q=1000;w=60',
    )
    expect(field(write(stacked([user, { ...tenant, limit: 2000 }]), NOW), 'RateLimit-Policy')).toBe(
      '"user";q=10;w=60, "tenant";q=2000;w=60',
    )
    expect(field(write(decision({ rule: 'user', limit: 10 }), NOW), 'RateLimit-Policy')).toBe('"user";q=10;w=60')
  })
})

describe('stacked rules in the drafts and legacy modes', () => {
  const burst = decision({ rule: 'burst', limit: 10, windowMs: 10_000, remaining: 3, resetMs: 4_000 })
  const day = decision({ rule: 'day', limit: 500_000, windowMs: 86_400_000, remaining: 400_000, resetMs: 50_000_000 })
  const stacked = (binding: Decision, rules: Decision[]): Decision => ({ ...binding, rules })

  it.each(['draft-7', 'draft-6'] as const)(
    "'%s': RateLimit-Policy lists every rule's limit and window in rule order",
    (mode) => {
      const list = rateLimitHeaders(stacked(burst, [burst, day]), [mode], NOW)
      expect(field(list, 'RateLimit-Policy')).toBe('10;w=10, 500000;w=86400')
      expect(parseList(field(list, 'RateLimit-Policy'))).toEqual([
        [10, new Map([['w', 10]])],
        [500_000, new Map([['w', 86_400]])],
      ])
    },
  )

  it('the single-policy fields show the binding rule', () => {
    const headers = asObject(rateLimitHeaders(stacked(burst, [day, burst]), ['draft-7', 'legacy'], NOW))
    expect(headers).toEqual({
      'RateLimit-Policy': '500000;w=86400, 10;w=10',
      RateLimit: 'limit=10, remaining=3, reset=4',
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '3',
      'X-RateLimit-Reset': '1767225614',
    })
  })

  it('rules that share a limit are listed once, with the window of the binding one (or else the first)', () => {
    const minute = decision({ rule: 'minute', limit: 10, windowMs: 60_000, remaining: 0, resetMs: 30_000 })
    const policyOf = (d: Decision) => field(rateLimitHeaders(d, ['draft-6'], NOW), 'RateLimit-Policy')
    expect(policyOf(stacked(minute, [burst, minute, day]))).toBe('10;w=60, 500000;w=86400')
    expect(policyOf(stacked(day, [burst, minute, day]))).toBe('10;w=10, 500000;w=86400')
  })

  it('a decision of one rule listed in rules reads as a single rule', () => {
    expect(field(rateLimitHeaders(stacked(burst, [burst]), ['draft-7'], NOW), 'RateLimit-Policy')).toBe('10;w=10')
  })
})

describe('headerModes refuses what is not a mode', () => {
  it.each<[string, unknown]>([
    ['a mode inside a nested array', [['ietf']]],
    ['an object whose text is a mode', { toString: () => 'legacy' }],
    ['a number', 7],
  ])('%s', (_, value) => {
    expect(() => headerModes(value)).toThrow(InvalidOptionError)
    expect(() => headerModes(value)).toThrow(`option "headers" must be 'ietf', 'draft-7', 'draft-6', 'legacy'`)
  })
})

describe('headerWriter keeps each rule its own numbers from one request to the next', () => {
  const stacked = (rules: Decision[]): Decision => ({ ...(rules[0] as Decision), rules })
  const user = decision({ rule: 'user', limit: 10 })
  const tenant = decision({ rule: 'tenant', limit: 1000 })

  test('two rules with the same limit and window keep their own names', () => {
    const write = headerWriter(['ietf'])
    const ip = decision({ rule: 'ip', limit: 10 })
    for (let i = 0; i < 2; i++) {
      expect(asObject(write(stacked([user, ip]), NOW))).toEqual({
        'RateLimit-Policy': '"user";q=10;w=60, "ip";q=10;w=60',
        RateLimit: '"user";r=42;t=18, "ip";r=42;t=18',
      })
    }
  })

  test('a rule whose window alone changes gets its new window', () => {
    const write = headerWriter(['ietf'])
    expect(field(write(decision(), NOW), 'RateLimit-Policy')).toBe('"default";q=100;w=60')
    expect(field(write(decision({ windowMs: 3_600_000 }), NOW), 'RateLimit-Policy')).toBe('"default";q=100;w=3600')
    const stackedHour = write(stacked([user, { ...tenant, windowMs: 3_600_000 }]), NOW)
    expect(field(stackedHour, 'RateLimit-Policy')).toBe('"user";q=10;w=60, "tenant";q=1000;w=3600')
  })

  test('the policy list follows when every member changes, or the rules are fewer', () => {
    const write = headerWriter(['ietf'])
    expect(field(write(stacked([user, tenant]), NOW), 'RateLimit-Policy')).toBe(
      '"user";q=10;w=60, "tenant";q=1000;w=60',
    )
    const both = stacked([
      { ...user, limit: 20 },
      { ...tenant, limit: 2000 },
    ])
    expect(field(write(both, NOW), 'RateLimit-Policy')).toBe('"user";q=20;w=60, "tenant";q=2000;w=60')
    expect(field(write(stacked([{ ...user, limit: 20 }]), NOW), 'RateLimit-Policy')).toBe('"user";q=20;w=60')
  })
})
