import { createAdaptiveThrottle, createRetryBudget } from '../src'
import { seededRandom } from './helpers/random'
import { loadPerSecond, type StormResult, type StormScenario, storm } from './helpers/storm'

// The retry storm: a fleet of clients, each at 10 requests a second, meets a server that fails everything for 10 s
// and then recovers. Each client is one process of the fleet and has its own budget or throttle, as separate
// processes do. The load that reaches the server is measured per second, as a ratio to the calls the clients
// made in that second (1 is the load without retries), on virtual time: exact and the same on every run.
// Set STORM_TABLE=1 to print the table of the client's README.

type Configuration = StormScenario['clientOptions']
const throttleOf = (index: number, time: Parameters<Configuration>[1]) =>
  createAdaptiveThrottle({ clock: time.clock, random: seededRandom(1_000_000 + index) })
const CONFIGURATIONS: Record<string, Configuration> = {
  'maxAttempts 5 alone': () => ({}),
  'retry budget (defaults)': (_index, time) => ({ retryBudget: createRetryBudget({ clock: time.clock }) }),
  'adaptive throttling (defaults)': (index, time) => ({ throttle: throttleOf(index, time) }),
  'budget and throttling': (index, time) => ({
    retryBudget: createRetryBudget({ clock: time.clock }),
    throttle: throttleOf(index, time),
  }),
}

interface Run {
  result: StormResult
  /** Load per second, as a ratio to the calls made in that second. */
  load: number[]
  /** Calls that were not served, by the second they started in. */
  unserved: number[]
}

async function run(scenario: Omit<StormScenario, 'clientOptions'>, clientOptions: Configuration): Promise<Run> {
  const result = await storm({ ...scenario, clientOptions })
  const unserved = new Array<number>(Math.ceil(scenario.endMs / 1000)).fill(0)
  for (const call of result.calls) if (call.outcome !== 'served') unserved[Math.floor(call.startMs / 1000)]!++
  return { result, load: loadPerSecond(result, scenario.endMs), unserved }
}

const seconds = (load: readonly number[], from: number, to: number) => load.slice(from, to)
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length

describe('the storm: 200 clients at 10 requests/s; the server fails everything for 10 s, then recovers', () => {
  const scenario = {
    clients: 200,
    requestsPerSecond: 10,
    failFromMs: 0,
    failUntilMs: 10_000,
    endMs: 25_000,
    seed: 15,
    transport: 'memory',
  } as const
  const runs = new Map<string, Run>()
  const runOf = (name: string) => runs.get(name)!

  beforeAll(async () => {
    for (const [name, configuration] of Object.entries(CONFIGURATIONS))
      runs.set(name, await run(scenario, configuration))
    if (process.env['STORM_TABLE']) printTable(runs)
  }, 120_000)

  it('with maxAttempts 5 alone, every failed call comes back 4 times: the load climbs to 5x', () => {
    const { load } = runOf('maxAttempts 5 alone')
    expect(Math.max(...seconds(load, 0, 10))).toBeGreaterThan(4.9)
    expect(mean(seconds(load, 5, 10))).toBeGreaterThan(4.8)
  })

  it('with the default retry budget, the load is 1.1x in every second of the failure, never more', () => {
    const { load } = runOf('retry budget (defaults)')
    for (const ratio of seconds(load, 0, 10)) expect(ratio).toBeCloseTo(1.1, 9)
  })

  it('with adaptive throttling, the load falls far below 1x while the server fails', () => {
    for (const name of ['adaptive throttling (defaults)', 'budget and throttling']) {
      const { load } = runOf(name)
      expect(Math.max(...seconds(load, 0, 10))).toBeLessThan(0.5)
      expect(Math.max(...seconds(load, 3, 10))).toBeLessThan(0.15)
    }
  })

  it('after recovery, the load never exceeds 1x once the retries of the failure are done', () => {
    expect(seconds(runOf('maxAttempts 5 alone').load, 14, 25)).toEqual(Array(11).fill(1))
    expect(seconds(runOf('retry budget (defaults)').load, 10, 25)).toEqual(Array(15).fill(1))
    for (const name of ['adaptive throttling (defaults)', 'budget and throttling']) {
      expect(Math.max(...seconds(runOf(name).load, 10, 25))).toBeLessThanOrEqual(1)
    }
  })

  it('after recovery, no call is refused by maxAttempts or a budget, and throttling lets all through within 13 s', () => {
    for (const name of ['maxAttempts 5 alone', 'retry budget (defaults)']) {
      expect(seconds(runOf(name).unserved, 10, 25)).toEqual(Array(15).fill(0))
    }
    for (const name of ['adaptive throttling (defaults)', 'budget and throttling']) {
      const { load, unserved } = runOf(name)
      // Each accept lowers the refusal probability, and the trickle it lets through finds the server back: more
      // than 0.75x of the load passes 5 s after recovery, 0.98x after 10 s, all of it after 13 s.
      expect(load[14]).toBeGreaterThan(0.75)
      expect(Math.min(...seconds(load, 20, 25))).toBeGreaterThanOrEqual(0.98)
      expect(seconds(unserved, 23, 25)).toEqual([0, 0])
    }
  })
})

describe('an outage that starts after 5 s of steady traffic (50 clients): its first second is the worst moment', () => {
  const scenario = {
    clients: 50,
    requestsPerSecond: 10,
    failFromMs: 5000,
    failUntilMs: 15_000,
    endMs: 25_000,
    seed: 16,
    transport: 'memory',
  } as const
  const runs = new Map<string, Run>()
  const loadOf = (name: string) => runs.get(name)!.load

  beforeAll(async () => {
    const configurations: Record<string, Configuration> = {
      ...CONFIGURATIONS,
      'retry budget, windowMs 10 s': (_index, time) => ({
        retryBudget: createRetryBudget({ clock: time.clock, windowMs: 10_000 }),
      }),
    }
    for (const [name, configuration] of Object.entries(configurations))
      runs.set(name, await run(scenario, configuration))
    if (process.env['STORM_TABLE']) printTable(runs, 5)
  }, 120_000)

  it('a budget counted over 1 s holds 1.1x from the first second; one over 10 s lets its savings out at once', () => {
    for (const ratio of seconds(loadOf('retry budget (defaults)'), 5, 15)) expect(ratio).toBeCloseTo(1.1, 9)
    // Five seconds of traffic saved 5 retries per client, all spent in the first second of the outage.
    expect(loadOf('retry budget, windowMs 10 s')[5]).toBeGreaterThan(1.4)
  })

  it('throttling alone does not bound the first seconds: it lets everything through until requests are 2x accepts', () => {
    expect(Math.max(...seconds(loadOf('adaptive throttling (defaults)'), 5, 10))).toBeGreaterThan(3)
  })

  it('budget and throttling together: at most 1.1x from the first second, below 1x once throttling engages', () => {
    const load = loadOf('budget and throttling')
    expect(Math.max(...seconds(load, 5, 15))).toBeLessThanOrEqual(1.1 + 1e-9)
    expect(Math.max(...seconds(load, 11, 15))).toBeLessThan(0.95)
    expect(Math.min(...seconds(load, 21, 25))).toBeGreaterThanOrEqual(0.99)
  })
})

describe('the storm over real HTTP', () => {
  it('10 clients with their budgets keep a failing node:http server at 1.1x, and are all served after', async () => {
    const scenario = {
      clients: 10,
      requestsPerSecond: 10,
      failFromMs: 0,
      failUntilMs: 3000,
      endMs: 4000,
      seed: 17,
      transport: 'http',
    } as const
    const { load, unserved } = await run(scenario, CONFIGURATIONS['retry budget (defaults)']!)
    for (const ratio of seconds(load, 0, 3)) expect(ratio).toBeCloseTo(1.1, 9)
    expect([load[3], unserved[3]]).toEqual([1, 0])
  }, 60_000)
})

/** The README's table: the load while the server fails (peak and mean), then each second after it recovers. */
function printTable(runs: Map<string, Run>, failFromSecond = 0) {
  const fixed = (n: number) => n.toFixed(2)
  const rows = [...runs].map(([name, { load }]) => {
    const failing = seconds(load, failFromSecond, failFromSecond + 10)
    const after = seconds(load, failFromSecond + 10, failFromSecond + 20)
    return `| ${name} | ${fixed(failing[0]!)} | ${fixed(Math.max(...failing))} | ${fixed(mean(failing))} | ${after.map(fixed).join(' ')} |`
  })
  console.log(['| | first second | peak | mean | after recovery, seconds 1 to 10 |', ...rows].join('\n'))
}
