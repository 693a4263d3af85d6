// math.lua's whole_doubles, run by a real redis-server, against what its comment says it reads: the decode every
// algorithm that stores its state whole goes through, so a value something else wrote is never taken for a state.
import fc from 'fast-check'
import math from '../src/lua/math.lua'
import { scriptOnRedis } from './fixtures/lua-script'

// ARGV: the value, then the count. Returns how many numbers it read (0: none), then the numbers.
const DRIVER = `
local numbers = { whole_doubles(ARGV[1], tonumber(ARGV[2])) }
return { #numbers, unpack(numbers) }
`
const MAX_WHOLE = 2 ** 53

const run = scriptOnRedis(`${math.trimEnd()}\n${DRIVER}`)

async function luaWholeDoubles(value: Buffer, count: 3 | 4): Promise<number[] | undefined> {
  const [length, ...numbers] = (await run(value, String(count))) as number[]
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
