import { parseRateLimitHeaders } from '../src'
import { fastestMs } from './helpers/timing'

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0)
const now = () => NOW

describe('parseRateLimitHeaders', () => {
  it('returns undefined when the response has no rate-limit fields', () => {
    expect(parseRateLimitHeaders(new Headers({ 'content-type': 'text/plain' }))).toBeUndefined()
  })

  describe("the IETF structured fields ('ietf', drafts -08 to -11)", () => {
    it('joins RateLimit and RateLimit-Policy by policy name', () => {
      const info = parseRateLimitHeaders(
        new Headers({ RateLimit: '"user";r=42;t=18', 'RateLimit-Policy': '"user";q=100;w=60' }),
      )
      expect(info).toEqual({
        format: 'ietf',
        name: 'user',
        limit: 100,
        remaining: 42,
        resetMs: 18_000,
        windowMs: 60_000,
        quotas: [{ name: 'user', limit: 100, remaining: 42, resetMs: 18_000, windowMs: 60_000 }],
      })
    })

    it('reports every policy and puts the binding one (fewest remaining) at the top', () => {
      const info = parseRateLimitHeaders(
        new Headers({
          RateLimit: '"user";r=42;t=18, "tenant";r=3;t=40',
          'RateLimit-Policy': '"user";q=100;w=60, "tenant";q=2000;w=60;qu="requests"',
        }),
      )
      expect(info?.quotas.map((quota) => quota.name)).toEqual(['user', 'tenant'])
      expect(info).toMatchObject({ name: 'tenant', limit: 2000, remaining: 3, resetMs: 40_000, quotaUnit: 'requests' })
    })

    it('on a tie of remaining, binds the quota that resets last', () => {
      const info = parseRateLimitHeaders({ ratelimit: '"a";r=0;t=5, "b";r=0;t=50' })
      expect(info?.name).toBe('b')
    })

    it('reads a list split over two fields, and a Node-style header record', () => {
      const info = parseRateLimitHeaders({ ratelimit: ['"a";r=5;t=1', '"b";r=1;t=2'] })
      expect(info?.quotas.map((quota) => quota.name)).toEqual(['a', 'b'])
      expect(info?.name).toBe('b')
    })

    it('accepts a Token as the policy identifier, as draft -08 wrote it', () => {
      expect(parseRateLimitHeaders({ ratelimit: 'user;r=1;t=2' })?.name).toBe('user')
    })

    it('ignores a malformed item and keeps the valid ones', () => {
      const info = parseRateLimitHeaders({ ratelimit: '"a";r=-1;t=5, "b";r=2.5, "c";t=3, "d";r=7;t=9' })
      expect(info?.quotas).toEqual([{ name: 'd', remaining: 7, resetMs: 9000 }])
    })

    it('ignores a malformed field entirely', () => {
      expect(parseRateLimitHeaders({ ratelimit: '"user";r=42;t=18,' })).toBeUndefined()
      expect(parseRateLimitHeaders({ 'ratelimit-policy': '"user";q=100;W=60' })).toBeUndefined()
    })
  })

  describe("draft-7 ('RateLimit: limit=, remaining=, reset=')", () => {
    it('reads the dictionary and the window of the matching policy', () => {
      const info = parseRateLimitHeaders({
        ratelimit: 'limit=100, remaining=42, reset=18',
        'ratelimit-policy': '100;w=60',
      })
      expect(info).toEqual({
        format: 'draft-7',
        limit: 100,
        remaining: 42,
        resetMs: 18_000,
        windowMs: 60_000,
        quotas: [{ limit: 100, remaining: 42, resetMs: 18_000, windowMs: 60_000 }],
      })
    })

    it('ignores a malformed member', () => {
      expect(parseRateLimitHeaders({ ratelimit: 'limit=100, remaining="x", reset=18' })).toMatchObject({
        limit: 100,
        resetMs: 18_000,
      })
      expect(parseRateLimitHeaders({ ratelimit: 'limit=100, remaining="x", reset=18' })?.remaining).toBeUndefined()
    })
  })

  describe("draft-6 ('RateLimit-Limit', '-Remaining', '-Reset', '-Policy')", () => {
    it('reads the three fields and the policy window', () => {
      const info = parseRateLimitHeaders({
        'ratelimit-limit': '100',
        'ratelimit-remaining': '0',
        'ratelimit-reset': '7',
        'ratelimit-policy': '100;w=60',
      })
      expect(info).toMatchObject({ format: 'draft-6', limit: 100, remaining: 0, resetMs: 7000, windowMs: 60_000 })
    })

    it('reads the first limit of the early list form', () => {
      expect(parseRateLimitHeaders({ 'ratelimit-limit': '10, 10;w=1, 50;w=60' })?.limit).toBe(10)
    })

    it('ignores a malformed field and keeps the others', () => {
      const info = parseRateLimitHeaders({
        'ratelimit-limit': '100',
        'ratelimit-remaining': '4.5',
        'ratelimit-reset': 'soon',
      })
      expect(info?.quotas).toEqual([{ limit: 100 }])
    })
  })

  describe('X-RateLimit-*', () => {
    it('reads a Reset above 1e9 as a Unix time in seconds (GitHub), measured from the Date header', () => {
      const date = new Date(NOW).toUTCString()
      const info = parseRateLimitHeaders(
        {
          'x-ratelimit-limit': '5000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(NOW / 1000 + 90),
          date,
        },
        { now: () => NOW + 3_600_000 },
      )
      expect(info).toMatchObject({ format: 'legacy', limit: 5000, remaining: 0, resetMs: 90_000 })
    })

    it('without a Date header, measures a Unix time from the injected clock', () => {
      const info = parseRateLimitHeaders({ 'x-ratelimit-reset': String(NOW / 1000 + 30) }, { now })
      expect(info?.resetMs).toBe(30_000)
    })

    it('reads a Reset above 1e12 as a Unix time in ms', () => {
      expect(parseRateLimitHeaders({ 'x-ratelimit-reset': String(NOW + 2500) }, { now })?.resetMs).toBe(2500)
    })

    it('reads a small Reset as seconds from now, fractions included', () => {
      expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '60' }, { now })?.resetMs).toBe(60_000)
      expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '1.25' }, { now })?.resetMs).toBe(1250)
    })

    it('a Unix time in the past means a reset now, not a negative wait', () => {
      expect(parseRateLimitHeaders({ 'x-ratelimit-reset': String(NOW / 1000 - 10) }, { now })?.resetMs).toBe(0)
    })

    it('ignores values that are not plain numbers', () => {
      expect(parseRateLimitHeaders({ 'x-ratelimit-remaining': '-3', 'x-ratelimit-reset': '1e3' })).toBeUndefined()
    })
  })

  it('prefers the IETF fields over the older forms sent alongside', () => {
    const info = parseRateLimitHeaders({
      ratelimit: '"user";r=1;t=2',
      'ratelimit-remaining': '50',
      'x-ratelimit-remaining': '60',
    })
    expect(info).toMatchObject({ format: 'ietf', remaining: 1 })
  })

  it('falls back to an older form when the RateLimit field is malformed', () => {
    const info = parseRateLimitHeaders({ ratelimit: 'remaining=', 'x-ratelimit-remaining': '60' })
    expect(info).toMatchObject({ format: 'legacy', remaining: 60 })
  })
})

describe('parseRateLimitHeaders on hostile input', () => {
  const policies = (count: number) => Array.from({ length: count }, (_, i) => `"p${i}";r=${i};t=60`).join(', ')

  it('a RateLimit field of 100 KB with a run of spaces parses in the time of a benign one (it blocked for 18 s)', () => {
    const hostile = `a${' '.repeat(100_000 - 2)}a`
    const benign = policies(8_000).slice(0, 100_000)
    const [hostileMs, benignMs] = fastestMs([
      () => parseRateLimitHeaders({ ratelimit: hostile, 'ratelimit-policy': hostile }),
      () => parseRateLimitHeaders({ ratelimit: benign, 'ratelimit-policy': benign }),
    ])
    expect(hostileMs! / benignMs!).toBeLessThan(10)
  })

  it('ignores a field longer than 8 KiB, however well formed, and reads one just within it', () => {
    const within = policies(500)
      .slice(0, 8192)
      .replace(/, "[^,]*$/, '')
    expect(within.length).toBeLessThanOrEqual(8192)
    expect(parseRateLimitHeaders({ ratelimit: within })?.quotas.length).toBeGreaterThan(400)
    const beyond = `${within}, ${' '.repeat(8192)}"last";r=1;t=1`
    expect(parseRateLimitHeaders({ ratelimit: beyond, 'x-ratelimit-remaining': '7' })).toMatchObject({
      format: 'legacy',
      remaining: 7,
    })
  })

  it('ignores an X-RateLimit number of more than 15 digits instead of reading Infinity', () => {
    expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '9'.repeat(400) })).toBeUndefined()
    expect(parseRateLimitHeaders({ 'x-ratelimit-remaining': '1'.repeat(16) })).toBeUndefined()
    expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '999999999999999' }, { now })?.resetMs).toBe(
      999_999_999_999_999 - NOW,
    )
  })

  it('reads the largest structured-field integer as a finite wait, and ignores one digit more', () => {
    expect(parseRateLimitHeaders({ ratelimit: '"u";r=0;t=999999999999999' })?.resetMs).toBe(999_999_999_999_999_000)
    expect(parseRateLimitHeaders({ ratelimit: '"u";r=0;t=9999999999999999' })).toBeUndefined()
  })

  it('gives each quota once whatever the number of policies repeated under one name', () => {
    const repeated = Array.from({ length: 2000 }, (_, i) => `"same";r=${i};t=1`).join(', ')
    expect(parseRateLimitHeaders({ ratelimit: repeated.slice(0, 8000).replace(/, "[^,]*$/, '') })?.quotas).toHaveLength(
      1,
    )
  })
})
