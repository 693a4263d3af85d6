import { createPoliteFetch, type PoliteFetchOptions } from '../../src'
import { reply, startServer } from './http-server'
import { seededRandom } from './random'
import { VirtualTime } from './virtual-time'

/** A fleet of clients, each sending requests at a steady rate, and a server that fails for a while. */
export interface StormScenario {
  clients: number
  /** Each client's rate of calls, the load the server sees when nothing is retried. */
  requestsPerSecond: number
  /** The server answers 503 (without Retry-After) to every request in [failFromMs, failUntilMs), 200 otherwise. */
  failFromMs: number
  failUntilMs: number
  /** The clients make calls until this time. */
  endMs: number
  seed: number
  /**
   * `'memory'`: the server is a `fetch` inside the test, which answers by the virtual clock, so that tens of
   * thousands of requests take a second or two. `'http'`: a real node:http server on loopback, for a smaller fleet.
   */
  transport: 'memory' | 'http'
  /**
   * The options of client `index`'s calls. Each client is one process of a fleet, with its own budget or throttle
   * (made here, once per client), as separate processes have.
   */
  clientOptions: (index: number, time: VirtualTime) => PoliteFetchOptions
}

/** How one call ended. */
export type Outcome = 'served' | 'refused' | Error['name']

export interface StormResult {
  /** The virtual time of every request that reached the server. */
  arrivals: number[]
  /** Every call the clients made: when it started and how it ended. */
  calls: { startMs: number; outcome: Outcome }[]
}

/** Runs the fleet on virtual time; the figures are the same on every run. */
export async function storm(scenario: StormScenario): Promise<StormResult> {
  const time = new VirtualTime()
  const arrivals: number[] = []
  const calls: StormResult['calls'] = []
  const status = () => (time.now >= scenario.failFromMs && time.now < scenario.failUntilMs ? 503 : 200)
  const http =
    scenario.transport === 'http'
      ? await startServer((_req, res) => {
          arrivals.push(time.now)
          reply(res, status())
        })
      : undefined
  const memory = async () => {
    arrivals.push(time.now)
    return new Response(null, { status: status() })
  }
  const url = http?.url ?? 'http://service.test/things'
  const intervalMs = 1000 / scenario.requestsPerSecond
  const phases = seededRandom(scenario.seed)

  async function client(index: number) {
    const fetchPolitely = createPoliteFetch({
      ...(http ? {} : { fetch: memory }),
      sleep: time.sleep,
      now: time.clock,
      random: seededRandom(scenario.seed * 1000 + index),
      ...scenario.clientOptions(index, time),
    })
    const pending: Promise<void>[] = []
    for (let at = phases() * intervalMs; at < scenario.endMs; at += intervalMs) {
      await time.sleep(at - time.now)
      const call = { startMs: time.now, outcome: 'pending' as Outcome }
      calls.push(call)
      pending.push(
        time.spawn(async () => {
          try {
            const res = await fetchPolitely(url)
            await res.arrayBuffer()
            call.outcome = res.status === 200 ? 'served' : 'refused'
          } catch (error) {
            call.outcome = (error as Error).name
          }
        }),
      )
    }
    await Promise.all(pending)
  }

  try {
    await time.run(Array.from({ length: scenario.clients }, (_, index) => () => client(index)))
  } finally {
    await http?.close()
  }
  return { arrivals, calls }
}

/**
 * The load on the server in each second from 0 to `untilMs`, as a ratio to the calls the clients made in that
 * second: 1 is the load without retries, 5 the load of five attempts per call.
 */
export function loadPerSecond({ arrivals, calls }: StormResult, untilMs: number): number[] {
  const seconds = Math.ceil(untilMs / 1000)
  const sent = new Array<number>(seconds).fill(0)
  const made = new Array<number>(seconds).fill(0)
  for (const at of arrivals) if (at < untilMs) sent[Math.floor(at / 1000)]!++
  for (const call of calls) if (call.startMs < untilMs) made[Math.floor(call.startMs / 1000)]!++
  return sent.map((count, second) => count / made[second]!)
}
