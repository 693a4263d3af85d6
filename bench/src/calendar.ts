// A micro benchmark of calendar periods (`npx tsx bench/src/calendar.ts`), not part of `npm run bench`: what a
// quota rule adds to a decision. The hot path (a time within the cached period) is set against the epoch-aligned
// window start a fixed-window rule computes, measured in the same run; the slow path (a new period) is timed alone.
import { compileCalendarPeriod } from '../../packages/core/src/calendar'
import { floorDiv } from '../../packages/core/src/util/math'

const DAY_MS = 86_400_000
const CALLS = 20_000_000
const ROUNDS = 5
const START = Date.UTC(2025, 2, 30, 0, 30) // a 23-hour day in Berlin
let sink = 0

function nsPerCall(run: (calls: number) => void, calls: number): number {
  const started = process.hrtime.bigint()
  run(calls)
  return Number(process.hrtime.bigint() - started) / calls
}

const daily = compileCalendarPeriod({ period: 'day', timeZone: 'Europe/Berlin' })
const monthly = compileCalendarPeriod({ period: 'month', timeZone: 'America/New_York' })
const contenders: Record<string, (calls: number) => void> = {
  'baseline: floorDiv(now, day) * day': (calls) => {
    let sum = 0
    for (let i = 0; i < calls; i++) sum += floorDiv(START + i, DAY_MS) * DAY_MS
    sink += sum
  },
  "at(now).endMs, 'day' in Europe/Berlin": (calls) => {
    let sum = 0
    for (let i = 0; i < calls; i++) sum += daily.at(START + i).endMs
    sink += sum
  },
  "msUntilEnd(now), 'month' in America/New_York": (calls) => {
    let sum = 0
    for (let i = 0; i < calls; i++) sum += monthly.msUntilEnd(START + i)
    sink += sum
  },
  "boundariesAround(now)[1], 'day' in Europe/Berlin": (calls) => {
    let sum = 0
    for (let i = 0; i < calls; i++) sum += daily.boundariesAround(START + i)[1] as number
    sink += sum
  },
}

const samples = new Map<string, number[]>(Object.keys(contenders).map((name) => [name, []]))
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, run] of Object.entries(contenders)) {
    const ns = nsPerCall(run, CALLS)
    if (round > 0) samples.get(name)?.push(ns) // round 0 warms up
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
const baseline = median(samples.values().next().value as number[])
for (const [name, values] of samples) {
  const ns = median(values)
  console.log(`${name.padEnd(52)} ${ns.toFixed(2).padStart(7)} ns/call  x${(ns / baseline).toFixed(2)}`)
}

// The slow path: every call a new day (a fresh period and its boundaries), over ten years in a DST zone.
for (const [label, method] of [
  ['new period: at(now)', 'at'],
  ['new period: boundariesAround(now)', 'boundariesAround'],
] as const) {
  const period = compileCalendarPeriod({ period: 'day', timeZone: 'America/New_York' })
  const days = 3650
  const started = process.hrtime.bigint()
  for (let day = 0; day < days; day++) sink += Number(period[method](Date.UTC(2020, 0, 1) + day * DAY_MS + 43_200_000))
  const us = Number(process.hrtime.bigint() - started) / days / 1000
  console.log(`${label.padEnd(52)} ${us.toFixed(1).padStart(7)} µs/call`)
}
if (sink === 42) console.log('') // keeps the loops from being optimised away
