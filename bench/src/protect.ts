// Part 7: what one admission to the load shedder costs as the tenants in its line grow. The same full line of 8 000
// waiters, built in one run two ways: every waiter of one tenant (the baseline), and each of its own tenant (as when
// tenants come from a client header). Choosing whom to start and whom to drop is a heap top, so the cost may grow
// with log(tenants), not with the tenants.
import { createShedder, type Shedder, type Ticket } from '@sluice/core'
import {
  alternate,
  atMost,
  type Contender,
  mark,
  type PartResult,
  pick,
  RATE_COLUMNS,
  RATIO_COLUMNS,
  ratio,
  settings,
  type TargetCheck,
} from './harness'

const LINE = 8000
const TENANTS = [1, 100, LINE] as const
// A heap of 8 000 is 13 levels deep: the choices cost a few times what they cost with one tenant, never 8 000 times.
const TARGET = 5

/** A shedder with a full line of `LINE` waiters spread over `tenants` tenants, and one cycle of it. */
function fullLine(tenants: number): () => void {
  // Deadlines and the standing-queue bound far away: the run measures the line's choices, not its expiry.
  const shedder: Shedder = createShedder({ maxInFlight: 1, queue: LINE, maxWait: '1h', queueTarget: '1h' })
  const names = Array.from({ length: tenants }, (_, i) => `tenant-${i}`)
  let next = 0
  let started: Ticket | undefined
  const onDecided = (ticket: Ticket) => {
    if (ticket.state === 'running') started = ticket
  }
  const admit = () => shedder.admit({ tenant: names[next++ % tenants] as string }, onDecided)
  let running = admit()
  for (let i = 0; i < LINE; i++) admit()
  // One cycle: the running request finishes and the waiter the line chooses starts; a request joins the line, and
  // one more finds it full (a waiter of a tenant over its share is dropped for it, or it is shed).
  return () => {
    running.release()
    running = started as Ticket
    admit()
    admit()
  }
}

/** Cycles per second of CPU time for `cycles` cycles. */
function cyclesPerSecond(cycle: () => void, cycles: number): number {
  const start = process.cpuUsage()
  for (let i = 0; i < cycles; i++) cycle()
  const used = process.cpuUsage(start)
  return cycles / ((used.user + used.system) / 1e6)
}

/** Runs part 7 and returns its tables and target check. */
export async function runProtect(): Promise<PartResult> {
  const cycles = settings.tiny ? 2_000 : 10_000
  const rounds = settings.tiny ? { rounds: 2, warmup: 1 } : { rounds: 7, warmup: 2 }
  const contenders: Contender[] = TENANTS.map((tenants) => {
    const cycle = fullLine(tenants)
    return { name: `${tenants} tenant${tenants === 1 ? '' : 's'}`, measure: async () => cyclesPerSecond(cycle, cycles) }
  })
  const results = await alternate(contenders, rounds)
  const one = pick(results, '1 tenant')
  const costRatios = TENANTS.slice(1).map((tenants) => ({
    tenants,
    // Time per cycle, many tenants over one: the inverse of the rates' ratio.
    ratio: ratio(one, pick(results, `${tenants} tenants`)),
  }))
  const widest = costRatios[costRatios.length - 1] as (typeof costRatios)[number]
  const target: TargetCheck = atMost(
    `shedder: µs per admission, ${LINE} tenants / 1 tenant (line of ${LINE}, same run)`,
    widest.ratio.median,
    TARGET,
    'ratio',
    'an admission must stay O(log n) in the tenants waiting, since tenants come from a client header (issue 25)',
  )
  return {
    title: '7. Load shedding: the cost of an admission by tenants in line',
    method:
      `\`createShedder({ maxInFlight: 1, queue: ${LINE}, maxWait: '1h', queueTarget: '1h' })\` with its line full ` +
      `(${LINE} waiters), the waiters spread over 1, 100 or ${LINE} tenants. One cycle: the running request is ` +
      'released, the waiter the line chooses (the tenant with the fewest in flight, then the oldest) starts, and a ' +
      `request of the next tenant joins the line. ${cycles} cycles per round, cycles per second of CPU time, ` +
      `${rounds.warmup} warm-up rounds then ${rounds.rounds} measured, alternating. The ratio is the time per cycle ` +
      'with many tenants over the time with one, paired per round.',
    tables: [
      {
        title: 'Cycles (release, start, admit) per second',
        columns: [{ header: 'tenants in line', kind: 'text' }, ...RATE_COLUMNS, { header: 'µs/cycle', kind: 'micros' }],
        rows: contenders.map(({ name }) => {
          const s = pick(results, name)
          return [name, s.median, s.min, s.max, 1e6 / s.median]
        }),
      },
      {
        title: 'Time per cycle over one tenant',
        columns: [{ header: 'tenants in line', kind: 'text' }, ...RATIO_COLUMNS],
        rows: costRatios.map(({ tenants, ratio: r }) => [
          `${tenants} tenants`,
          r.median,
          r.min,
          r.max,
          tenants === LINE ? target.target : '',
          tenants === LINE ? mark(target) : '',
        ]),
      },
    ],
    targets: [target],
  }
}

if (require.main === module) {
  runProtect().then(
    (result) => {
      const { renderTable } = require('./harness') as typeof import('./harness')
      for (const table of result.tables) console.log(`${renderTable(table)}\n`)
    },
    (error: unknown) => {
      console.error(error)
      process.exit(1)
    },
  )
}
