import fc from 'fast-check'
import * as reference from 'structured-headers'
import {
  type BareItem,
  type ListMember,
  parseDictionary,
  parseItem,
  parseList,
  StructuredFieldError,
  Token,
} from '../src/structured-fields'
import { fastestMs } from './helpers/timing'

// The client's parser is checked against structured-headers (a full RFC 9651 implementation), which is only a
// devDependency: the published client stays free of runtime dependencies.

type Canonical = unknown

function canonicalBare(value: unknown): Canonical {
  if (value instanceof Token) return { token: value.value }
  if (value instanceof reference.Token) return { token: value.toString() }
  if (value instanceof reference.DisplayString) return value.toString()
  if (value instanceof Uint8Array) return { bytes: [...value] }
  if (value instanceof ArrayBuffer) return { bytes: [...new Uint8Array(value)] }
  if (value instanceof Date) return { date: value.getTime() }
  return value
}

function canonicalParams(params: ReadonlyMap<string, unknown>): Canonical {
  return [...params].map(([key, value]) => [key, canonicalBare(value)])
}

function canonicalOurs(member: ListMember): Canonical {
  if ('items' in member) return { inner: member.items.map(canonicalOurs), params: canonicalParams(member.params) }
  return { value: canonicalBare(member.value), params: canonicalParams(member.params) }
}

function canonicalTheirs(member: reference.Item | reference.InnerList): Canonical {
  const [value, params] = member
  if (Array.isArray(value)) {
    return { inner: value.map((item) => canonicalTheirs(item)), params: canonicalParams(params) }
  }
  return { value: canonicalBare(value), params: canonicalParams(params) }
}

/** Both parsers' verdict on a List field: the canonical value, or 'rejected'. */
function bothAsList(field: string): [Canonical, Canonical] {
  let ours: Canonical = 'rejected'
  let theirs: Canonical = 'rejected'
  try {
    ours = parseList(field).map(canonicalOurs)
  } catch (error) {
    expect(error).toBeInstanceOf(StructuredFieldError)
  }
  try {
    theirs = reference.parseList(field).map(canonicalTheirs)
  } catch {}
  return [ours, theirs]
}

function bothAsDictionary(field: string): [Canonical, Canonical] {
  let ours: Canonical = 'rejected'
  let theirs: Canonical = 'rejected'
  try {
    ours = [...parseDictionary(field)].map(([key, member]) => [key, canonicalOurs(member)])
  } catch (error) {
    expect(error).toBeInstanceOf(StructuredFieldError)
  }
  try {
    theirs = [...reference.parseDictionary(field)].map(([key, member]) => [key, canonicalTheirs(member)])
  } catch {}
  return [ours, theirs]
}

describe('structured field parser', () => {
  it('reads the IETF RateLimit items: a String, then parameters', () => {
    const [first, second] = parseList('"user";r=42;t=18, "tenant";r=0;t=3')
    expect(first).toEqual({
      value: 'user',
      params: new Map([
        ['r', 42],
        ['t', 18],
      ]),
    })
    expect(second).toEqual({
      value: 'tenant',
      params: new Map([
        ['r', 0],
        ['t', 3],
      ]),
    })
  })

  it('reads the draft-7 RateLimit dictionary', () => {
    const dictionary = parseDictionary('limit=100, remaining=42, reset=18')
    expect([...dictionary].map(([key, item]) => [key, 'value' in item ? item.value : undefined])).toEqual([
      ['limit', 100],
      ['remaining', 42],
      ['reset', 18],
    ])
  })

  it('reads every kind of bare item', () => {
    const value = (field: string): BareItem => parseItem(field).value
    expect(value('-17')).toBe(-17)
    expect(value('4.125')).toBe(4.125)
    expect(value('"a \\"quoted\\" \\\\ string"')).toBe('a "quoted" \\ string')
    expect(value('foo/bar:baz')).toEqual(new Token('foo/bar:baz'))
    expect(value(':aGVsbG8=:')).toEqual(Uint8Array.from([104, 101, 108, 108, 111]))
    expect(value('?1')).toBe(true)
    expect(value('?0')).toBe(false)
    expect(value('@1659578233')).toEqual(new Date(1659578233_000))
    expect(value('%"caf%c3%a9"')).toBe('café')
  })

  it('reads inner lists and a parameter without a value as true', () => {
    expect(parseList('(1 2);x, 3;flag')).toEqual([
      {
        items: [
          { value: 1, params: new Map() },
          { value: 2, params: new Map() },
        ],
        params: new Map([['x', true]]),
      },
      { value: 3, params: new Map([['flag', true]]) },
    ])
  })

  it.each([
    ['a trailing comma', '1, 2,'],
    ['an upper-case key', '"user";R=42'],
    ['16 integer digits', '1234567890123456'],
    ['4 fractional digits', '1.2345'],
    ['13 digits before the point', '1234567890123.5'],
    ['an unterminated string', '"user'],
    ['an invalid escape', '"a\\nb"'],
    ['a non-ASCII character', '"café"'],
    ['a decimal ending in a point', '1.'],
    ['garbage after a value', '42 43'],
    ['a boolean that is not 0 or 1', '?2'],
    ['upper-case percent-encoding', '%"caf%C3%A9"'],
  ])('rejects %s', (_name, field) => {
    expect(() => parseList(field)).toThrow(StructuredFieldError)
  })

  it('agrees with structured-headers on arbitrary short List and Dictionary fields', () => {
    const unit = fc.constantFrom(...'az AZ09-.*;=,()"\\:?@%\t_/!é'.split(''))
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 24 }), (field) => {
        const [ours, theirs] = bothAsList(field)
        expect(ours).toEqual(theirs)
        const [oursDict, theirsDict] = bothAsDictionary(field)
        expect(oursDict).toEqual(theirsDict)
      }),
      { numRuns: 3000, seed: 5 },
    )
  })

  it('reads back every List that structured-headers serializes', () => {
    const key = fc.stringMatching(/^[a-z*][a-z0-9_.*-]{0,5}$/)
    const bare = fc.oneof(
      fc.integer({ min: -999_999_999_999_999, max: 999_999_999_999_999 }),
      fc.integer({ min: -999_999, max: 999_999 }).map((n) => n / 8),
      fc.stringMatching(/^[ -~]{0,8}$/),
      fc.stringMatching(/^[A-Za-z*][A-Za-z0-9!#$%&'*+.^_`|~:/-]{0,6}$/).map((t) => new reference.Token(t)),
      fc.boolean(),
      fc.uint8Array({ maxLength: 6 }),
    )
    const params = fc.uniqueArray(fc.tuple(key, bare), { selector: ([k]) => k, maxLength: 3 }).map((p) => new Map(p))
    const item = fc.tuple(bare, params)
    const member = fc.oneof(item, fc.tuple(fc.array(item, { maxLength: 3 }), params))
    fc.assert(
      fc.property(fc.array(member, { minLength: 1, maxLength: 4 }), (list) => {
        const field = reference.serializeList(list as reference.List)
        const [ours, theirs] = bothAsList(field)
        expect(ours).not.toBe('rejected')
        expect(ours).toEqual(theirs)
      }),
      { numRuns: 1000, seed: 9 },
    )
  })
})

// A header is input from the network: parsing it must take time linear in its length, whatever its shape. Each
// hostile field of 100 KB is timed against a benign List of the same length, parsed in the same run; the ratio is
// bounded, so a super-linear path (a backtracking regular expression, a rescan per character) fails the test.
describe('structured field parser on hostile input of 100 KB', () => {
  const N = 100_000
  const benign = '"user";r=42;t=18, '
    .repeat(N / 18)
    .slice(0, N)
    .replace(/[, ]+$/, '')
  const keys = (n: number, separator: string, suffix: string) =>
    Array.from({ length: n }, (_, i) => `k${i}${suffix}`).join(separator)
  const cases: [string, string, (field: string) => unknown][] = [
    [
      'a run of spaces between two values, which the trim blocked the event loop on',
      `a${' '.repeat(N - 2)}a`,
      parseList,
    ],
    ['spaces around a value', `${' '.repeat(N / 2)}a${' '.repeat(N / 2)}`, parseList],
    ['a run of spaces before a comma', `a${' '.repeat(N)},b`, parseList],
    ['a run of spaces inside an inner list', `(${' '.repeat(N)})`, parseList],
    ['many members', `${'a,'.repeat(N / 2)}a`, parseList],
    ['many items in an inner list', `(${'1 '.repeat(N / 2)})`, parseList],
    ['many inner lists', '(1 2),'.repeat(N / 6).slice(0, -1), parseList],
    ['nesting, which structured fields do not allow', '('.repeat(N), parseList],
    ['one parameter repeated', `a${';b=1'.repeat(N / 4)}`, parseList],
    ['many distinct parameters', `a;${keys(N / 8, ';', '=1')}`, parseList],
    ['many dictionary members', keys(N / 8, ',', '=1'), parseDictionary],
    ['a long key', `${'k'.repeat(N)}=1`, parseDictionary],
    ['a long string', `"${'x'.repeat(N)}"`, parseItem],
    ['a string of escapes', `"${'\\"'.repeat(N / 2)}"`, parseItem],
    ['an unterminated string', `"${'x'.repeat(N)}`, parseItem],
    ['a long token', 'a'.repeat(N), parseItem],
    ['a long byte sequence', `:${'QUFB'.repeat(N / 4)}:`, parseItem],
    ['a long display string', `%"${'%c3%a9'.repeat(N / 6)}"`, parseItem],
    ['a huge number', '9'.repeat(N), parseItem],
    ['a huge date', `@${'9'.repeat(N)}`, parseItem],
  ]

  it.each(cases)('parses %s in time linear in its length', (_name, field, parse) => {
    const attempt = () => {
      try {
        parse(field)
      } catch (error) {
        if (!(error instanceof StructuredFieldError)) throw error
      }
    }
    expect(parseList(benign)).toHaveLength(Math.ceil(benign.length / 18))
    const [hostileMs, benignMs] = fastestMs([attempt, () => parseList(benign)])
    expect(hostileMs! / benignMs!).toBeLessThan(10)
  })

  it('reads the long but valid ones right', () => {
    expect(parseList(`${' '.repeat(N / 2)}a${' '.repeat(N / 2)}`)).toEqual([
      { value: new Token('a'), params: new Map() },
    ])
    expect(parseList(`a${';b=1'.repeat(N / 4)}`)[0]?.params).toEqual(new Map([['b', 1]]))
    expect(parseDictionary(keys(N / 8, ',', '=1')).size).toBe(N / 8)
    expect(() => parseItem('9'.repeat(N))).toThrow(StructuredFieldError)
  })
})
