// What parseDuration tells a user who wrote a duration it cannot take: the option (`window` unless told), and why.
import { InvalidOptionError, parseDuration } from '@sluice/core'

function thrown(parse: () => unknown): InvalidOptionError {
  try {
    parse()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('expected parseDuration to throw')
}

test.each<[unknown, RegExp]>([
  ['1 fortnight', /must be milliseconds or a duration such as '500ms', '10s', '1m', '1h', '1d' \(got "1 fortnight"\)/],
  ['1e3s', /must be milliseconds or a duration such as .* \(got "1e3s"\)/],
  ['<script>', /must be milliseconds or a duration such as .* \(got "<script>"\)/],
  [{ toString: () => '1m' }, /must be a number of milliseconds or a duration string \(got object\)/],
])('%p is refused for the option "window" by default, saying what a duration looks like', (value, reason) => {
  const error = thrown(() => parseDuration(value))
  expect(error.option).toBe('window')
  expect(error.message).toMatch(reason)
})

test.each<[unknown, string]>([
  [1.5, '1.5'],
  [0, '0'],
  [-1000, '-1000'],
  [Number.POSITIVE_INFINITY, 'Infinity'],
  ['0s', '"0s"'],
  ['0.5ms', '"0.5ms"'],
  [`${'9'.repeat(30)}d`, `"${'9'.repeat(30)}d"`],
])('%p is no positive whole number of milliseconds, and the error says so', (value, got) => {
  const error = thrown(() => parseDuration(value, 'rules[1].block'))
  expect(error.option).toBe('rules[1].block')
  expect(error.message).toBe(
    `sluice: option "rules[1].block" must be a positive whole number of milliseconds (got ${got})`,
  )
})
