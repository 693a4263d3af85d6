// math.lua run by a real redis-server: whole_doubles against what its comment says it reads (the decode every
// algorithm that stores its state whole goes through, so a value something else wrote is never taken for a state),
// and floor_div and ceil_div against packages/core's, which every algorithm's Lua twin must agree with.
import fc from 'fast-check'
import { ceilDiv, floorDiv } from '../../core/src/util/math'
import math from '../src/lua/math.lua'
import { scriptOnRedis } from './fixtures/lua-script'

// ARGV: 'div', a and b: returns floor_div(a, b) and ceil_div(a, b). Else ARGV: 'whole', the value, then the count:
// returns how many numbers it read (0: none), then the numbers.
const DRIVER = `
if ARGV[1] == 'div' then
  local a, b = tonumber(ARGV[2]), tonumber(ARGV[3])
  return { floor_div(a, b), ceil_div(a, b) }
end
local numbers = { whole_doubles(ARGV[2], tonumber(ARGV[3])) }
return { #numbers, unpack(numbers) }
`
const MAX_WHOLE = 2 ** 53

const run = scriptOnRedis(`${math.trimEnd()}\n${DRIVER}`)

async function luaWholeDoubles(value: Buffer, count: 3 | 4): Promise<number[] | undefined> {
  const [length, ...numbers] = (await run('whole', value, String(count))) as number[]
  return length === 0 ? undefined : numbers
}

/**
 * The comment's rule: `count` little-endian doubles, then the key's offset from the clock (a last double, never 0,
 * when there is one more; else 0), each a whole number from 0 to 2^53. Anything else reads as nothing.
 */
function reference(value: Buffer, count: 3 | 4): number[] | undefined {
  if (value.length !== count * 8 && value.length !== count * 8 + 8) return undefined
  const numbers = Array.from({ length: value.length / 8 }, (_, i) => value.readDoubleLE(i * 8))
  if (numbers.length === count) numbers.push(0)
  else if (numbers[count] === 0) return undefined
  const whole = (n: number) => n >= 0 && n <= MAX_WHOLE && Number.isInteger(n)
  // Redis replies with integers: -0 comes back as 0.
  return numbers.every(whole) ? numbers.map((n) => n + 0) : undefined
}

const doubles = (numbers: readonly number[]) => {
  const value = Buffer.alloc(numbers.length * 8)
  for (const [i, n] of numbers.entries()) value.writeDoubleLE(n, i * 8)
  return value
}

test('a state as the algorithms write it reads back, with its offset or without', async () => {
  expect(await luaWholeDoubles(doubles([1_700_000_060_000, 1_700_000_000_000, 7]), 3)).toEqual([
    1_700_000_060_000, 1_700_000_000_000, 7, 0,
  ])
  expect(await luaWholeDoubles(doubles([9, 8, 7, 250]), 3)).toEqual([9, 8, 7, 250])
  expect(await luaWholeDoubles(doubles([9, 8, 7, 6]), 4)).toEqual([9, 8, 7, 6, 0])
  expect(await luaWholeDoubles(doubles([9, 8, 7, 6, 250]), 4)).toEqual([9, 8, 7, 6, 250])
  expect(await luaWholeDoubles(doubles([MAX_WHOLE, 0, 0]), 3)).toEqual([MAX_WHOLE, 0, 0, 0])
})

test('a value no algorithm wrote reads as nothing: another length, a last 0 offset, a number that is not whole', async () => {
  for (const [value, count] of [
    [doubles([1, 2]), 3], // too short
    [doubles([1, 2, 3, 4, 5]), 3], // too long for 3 and an offset
    [doubles([1, 2, 3]), 4], // 3 numbers are no state of 4
    [Buffer.concat([doubles([1, 2, 3]), Buffer.from([0])]), 3], // not a whole number of doubles
    [doubles([1, 2, 3, 0]), 3], // an offset of 0 is never written
    [doubles([1, 2, 3, 4, 0]), 4],
    [doubles([1, 2.5, 3]), 3], // a fraction
    [doubles([1, -2, 3]), 3], // a negative number
    [doubles([1, 2, 3, 4, -250]), 4], // a negative offset
    [doubles([1, MAX_WHOLE + 2, 3]), 3], // above 2^53
    [doubles([1, Number.NaN, 3]), 3],
    [doubles([1, 2, Number.POSITIVE_INFINITY, 4]), 4],
    [Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00]), 3],
    [Buffer.alloc(0), 4],
  ] as const) {
    expect(reference(value, count)).toBeUndefined()
    expect(await luaWholeDoubles(value, count)).toBeUndefined()
  }
})

test('Lua reads any value as the rule says: states, near misses and random bytes', async () => {
  const number = fc.oneof(
    fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    fc.constantFrom(0, -0, 1, MAX_WHOLE, MAX_WHOLE + 2, -1, 0.5, Number.NaN, Number.POSITIVE_INFINITY),
    fc.double(),
  )
  const value = fc.oneof(
    fc.array(number, { minLength: 2, maxLength: 6 }).map(doubles),
    fc.uint8Array({ maxLength: 48 }).map((bytes) => Buffer.from(bytes)),
  )
  await fc.assert(
    fc.asyncProperty(value, fc.constantFrom<3 | 4>(3, 4), async (bytes, count) => {
      expect(await luaWholeDoubles(bytes, count)).toEqual(reference(bytes, count))
    }),
    { numRuns: 2000 },
  )
})

async function luaDivisions(a: number, b: number): Promise<[floor: number, ceil: number]> {
  return (await run('div', String(a), String(b))) as [number, number]
}

// Redis replies with integers: -0 (ceilDiv(-1, 2)) comes back as 0.
const jsDivisions = (a: number, b: number) => [floorDiv(a, b) + 0, ceilDiv(a, b) + 0]

test('floor_div and ceil_div give what floorDiv and ceilDiv give, for every safe integer a and b > 0', async () => {
  const MAX = Number.MAX_SAFE_INTEGER
  for (const [a, b] of [
    [7, 2],
    [-7, 2],
    [6, 3],
    [-6, 3],
    [0, 5],
    [1, 1],
    [-1, 1],
    [1_796_617_092_633, 1000], // a Redis time in ms, a window of a second
    [1_796_617_092_633, 86_400_000],
    [MAX, 3],
    [-MAX, 3],
    [MAX - 1, MAX],
    [MAX, MAX],
    [9_007_199_254_740_990, 3],
    [3 * 2 ** 51 + 2, 3], // a quotient just above a whole number, in the binade below 2^53
  ] as const) {
    expect(await luaDivisions(a, b)).toEqual(jsDivisions(a, b))
  }
  const divisor = fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: MAX }))
  // Near multiples of b, where a quotient that rounded across a whole number would show.
  const nearMultiple = fc
    .tuple(divisor, fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), fc.integer({ min: -2, max: 2 }))
    .map(([b, k, d]) => [k * b + d, b] as const)
    .filter(([a]) => Number.isSafeInteger(a))
  const any = fc.tuple(fc.integer({ min: -MAX, max: MAX }), divisor)
  await fc.assert(
    fc.asyncProperty(fc.oneof(nearMultiple, any), async ([a, b]) => {
      expect(await luaDivisions(a, b)).toEqual(jsDivisions(a, b))
    }),
    { numRuns: 2000 },
  )
})
