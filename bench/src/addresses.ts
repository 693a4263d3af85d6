// Micro benchmarks of the two things that read a client address on every request: ipKey (the default key) and an
// address list's `includes` (allow and deny lists). Nanoseconds per call for each spelling an adapter hands over.
// Not part of `npm run bench` (no peer to compare with, so no ratio to print): run it by hand before and after a
// change to the address parser, `npx tsx bench/src/addresses.ts` from the repository root (it reads the sources).
// Each figure is the median of 9 rounds of 1 000 000 calls over 4096 distinct inputs, after a warm-up.
import { ipKey } from '../../packages/core/src/http/ip'
import { compileAddressList } from '../../packages/core/src/http/ip-list'

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
const v6 = () => Array.from({ length: 8 }, group).join(':')

const SPELLINGS: Readonly<Record<string, () => string>> = {
  'IPv4 (req.ip)': v4,
  'mapped ::ffff:a.b.c.d (dual-stack socket)': () => `::ffff:${v4()}`,
  'IPv6 full': v6,
  'IPv6 compressed': () => `2001:db8:${group()}:${group()}::${group()}`,
  'IPv4 with port': () => `${v4()}:${1024 + (next() % 60_000)}`,
  '[IPv6]:port': () => `[2001:db8:${group()}:${group()}::${group()}]:443`,
}

function time(call: (input: string) => unknown, inputs: readonly string[]): number {
  let sink = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < CALLS; i++) if (call(inputs[i % DISTINCT]!)) sink++
  const elapsed = Number(process.hrtime.bigint() - start)
  if (sink < 0) throw new Error('unreachable')
  return elapsed / CALLS
}

function report(label: string, call: (input: string) => unknown, make: () => string): void {
  const inputs = Array.from({ length: DISTINCT }, make)
  time(call, inputs)
  const rounds = Array.from({ length: ROUNDS }, () => time(call, inputs)).sort((a, b) => a - b)
  const median = rounds[Math.floor(ROUNDS / 2)]!
  console.log(`${label.padEnd(56)} ${median.toFixed(1).padStart(7)} ns/call  (min ${rounds[0]!.toFixed(1)})`)
}

for (const [label, make] of Object.entries(SPELLINGS)) report(`ipKey: ${label}`, (input) => ipKey(input), make)

// A list as large as a cloud provider's published ranges: 1000 IPv4 and 1000 IPv6 blocks.
const entries = [
  ...Array.from({ length: 1000 }, () => `${octet()}.${octet()}.${octet()}.0/24`),
  ...Array.from({ length: 1000 }, () => `2001:db8:${group()}::/48`),
]
const list = compileAddressList([...new Set(entries)], 'allowList')
for (const [label, make] of Object.entries(SPELLINGS)) {
  report(`includes, 2000 blocks: ${label}`, (input) => list.includes(input), make)
}
