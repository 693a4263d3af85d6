// A micro benchmark of ipKey, which runs on every request that is keyed by client address: nanoseconds per call
// for each spelling an adapter hands it. Not part of `npm run bench` (no peer to compare with, so no ratio); run it
// by hand before and after a change to the address parser: `npm run build && npx tsx bench/src/ip-key.ts` from
// the repository root. It prints the median of 9 rounds of 1 000 000 calls each, after a warm-up.
import { ipKey } from '@sluice/core'

const ROUNDS = 9
const CALLS = 1_000_000
const DISTINCT = 4096

/** A deterministic generator, so two runs time the same inputs. */
function lcg(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state
  }
}

const next = lcg(42)
const octet = () => next() % 256
const group = () => (next() % 0x10000).toString(16)
const v4 = () => `${octet()}.${octet()}.${octet()}.${octet()}`

const SPELLINGS: Readonly<Record<string, () => string>> = {
  'IPv4 (req.ip)': v4,
  'mapped ::ffff:a.b.c.d (dual-stack socket)': () => `::ffff:${v4()}`,
  'IPv6 full': () => Array.from({ length: 8 }, group).join(':'),
  'IPv6 compressed': () => `2001:db8:${group()}:${group()}::${group()}`,
  'IPv4 with port': () => `${v4()}:${1024 + (next() % 60_000)}`,
  '[IPv6]:port': () => `[2001:db8:${group()}:${group()}::${group()}]:443`,
}

function time(inputs: readonly string[]): number {
  let sink = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < CALLS; i++) sink += ipKey(inputs[i % DISTINCT])!.length
  const elapsed = Number(process.hrtime.bigint() - start)
  if (sink === 0) throw new Error('unreachable: keys are never empty')
  return elapsed / CALLS
}

for (const [label, make] of Object.entries(SPELLINGS)) {
  const inputs = Array.from({ length: DISTINCT }, make)
  time(inputs)
  const rounds = Array.from({ length: ROUNDS }, () => time(inputs)).sort((a, b) => a - b)
  const median = rounds[Math.floor(ROUNDS / 2)]!
  console.log(`${label.padEnd(44)} ${median.toFixed(1).padStart(7)} ns/call  (min ${rounds[0]!.toFixed(1)})`)
}
