// tsc's messages for the option mistakes the types catch: each names the option (or the marker type that explains
// it), not only "is not assignable to LimiterOptions". One tsc run over test/types/wrong/options.ts.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const WRONG = join(__dirname, 'wrong')

/** tsc's messages, by the line of test/types/wrong/options.ts they are about. */
function messagesByLine(): Map<number, string> {
  let output = ''
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', WRONG, '--pretty', 'false'], {
      encoding: 'utf8',
    })
  } catch (error) {
    output = (error as { stdout: string }).stdout
  }
  const byLine = new Map<number, string>()
  let line = 0
  for (const text of output.split('\n')) {
    const at = /^.*options\.ts\((\d+),\d+\): error/.exec(text)
    if (at) line = Number(at[1])
    if (line > 0) byLine.set(line, `${byLine.get(line) ?? ''}${text}\n`)
  }
  return byLine
}

const lines = readFileSync(join(WRONG, 'options.ts'), 'utf8').split('\n')
const lineOf = (code: string) => lines.indexOf(code) + 1

test('each option mistake is a compile error whose message names the option', () => {
  const messages = messagesByLine()
  const expected: [code: string, mentions: RegExp][] = [
    ['createLimiter({ limit: 5 })', /Property 'window' is missing .* 'WindowLimiterOptions'/],
    ["createLimiter({ algorithm: 'token-bucket', limit: 5 })", /Property 'window' is missing/],
    [
      "createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1m', rate: 3 })",
      /property 'rate' are incompatible[\s\S]*RateNeedsABucket/,
    ],
    ["createLimiter({ limit: 5, window: '1m', rate: 3 })", /property 'rate'[\s\S]*RateNeedsABucket/],
    [
      "createLimiter({ limit: 5, window: '1m', rules: [{ limit: 5, window: '1s' }] })",
      /property 'rules' are incompatible[\s\S]*NotWithRules/,
    ],
    ["createLimiter({ period: 'day', limit: 5, window: '1s' })", /NotWithPeriod/],
    ["createLimiter({ limit: 5, window: '1s', timeZone: 'UTC' })", /property 'timeZone'[\s\S]*TimeZoneNeedsAPeriod/],
    ["rateLimit({ window: '1m' })", /Property 'limit' is missing/],
    ["rateLimit({ limit: 5, window: '1m', rate: 3 })", /property 'rate'[\s\S]*RateNeedsABucket/],
  ]
  for (const [code, mentions] of expected) {
    const line = lineOf(code)
    expect(line).toBeGreaterThan(0)
    expect(messages.get(line)).toMatch(mentions)
  }
  // Nothing else in the file is an error: one message per mistake.
  expect([...messages.keys()].sort((a, b) => a - b)).toEqual(expected.map(([code]) => lineOf(code)))
  // One tsc run over the sources and the frameworks' types: seconds, more on a busy machine.
}, 120_000)
