import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { StoreUnavailableError } from '@sluice/core/store'
import Redis from 'ioredis'
import { type RedisServer, startRedis } from '../../../scripts/redis-server'
import { NodeHealth, Unanswered } from '../src/health'
import { ScriptRunner } from '../src/script-runner'

let server: RedisServer
let client: Redis

beforeAll(async () => {
  server = await startRedis()
  // No offline queue, no resend: what the store recommends. A short, steady reconnect delay, so the test sees Redis
  // come back soon after it does.
  client = new Redis({
    host: server.host,
    port: server.port,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    retryStrategy: () => 20,
  })
  client.on('error', () => {}) // connection errors while the server is down are expected here
  await new Promise((resolve) => client.once('ready', resolve))
})

afterAll(async () => {
  client?.disconnect()
  await server?.stop()
})

function recordingNode(withInfo = true) {
  const log = { warnings: [] as string[], infos: [] as string[], refreshes: 0, away: 0, back: 0, probes: 0 }
  const logger = { warn: (m: string) => log.warnings.push(m), error: () => {} }
  const runner = new ScriptRunner(client, undefined)
  const node = new NodeHealth({
    label: 'Redis',
    inCluster: false,
    timeoutMs: 100,
    backstopMs: 3000,
    probeIntervalMs: 50,
    logger: withInfo ? { ...logger, info: (m: string) => log.infos.push(m) } : logger,
    onError: 'open',
    duringOutage: 'admitting every request',
    probe: (key) => {
      log.probes++
      return runner.probe(key)
    },
    refresh: () => log.refreshes++,
    route: () => 'Redis',
    newLocal: undefined,
    onAway: () => log.away++,
    onBack: () => log.back++,
  })
  return { node, log }
}

const KEY = 'sluice:default:sw:{health}'

/**
 * A reply as a failure can show it: an Unanswered holds its NodeHealth, which holds it back, and jest cannot send
 * such a value from a worker ("Converting circular structure to JSON"), hiding the assertion. Its cause is what tells.
 */
function shown(reply: unknown): unknown {
  if (!(reply instanceof Unanswered)) return reply
  const { cause } = reply
  return `Unanswered (${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)})`
}

/**
 * Calls the node every 20 ms until Redis does the work, or until `probes` probes have been sent since the call
 * began and the node is still away; the last reply, shown. Bounded by probes, not by the clock, so a busy machine
 * gives it more time and a Redis that never answers still ends it.
 */
async function untilAnswered(node: NodeHealth, log: { probes: number }, probes: number): Promise<unknown> {
  const limit = log.probes + probes
  for (;;) {
    const reply = await node.call(KEY, () => client.ping())
    if (!(reply instanceof Unanswered) || log.probes >= limit) return shown(reply)
    await sleep(20)
  }
}

/** Waits for the client to reconnect: until then every probe fails at once ("Stream isn't writeable"). */
async function reconnected(): Promise<void> {
  if (client.status !== 'ready') await once(client, 'ready')
}

test('an outage is logged once, sends nothing to Redis while it lasts, and ends, logged once, when a probe is answered', async () => {
  const { node, log } = recordingNode()
  expect(shown(await node.call(KEY, () => client.ping()))).toBe('PONG')

  await server.kill()
  expect(await node.call(KEY, () => client.ping())).toBeInstanceOf(Unanswered)
  let sent = 0
  for (let i = 0; i < 20; i++) {
    const reply = await node.call(KEY, () => {
      sent++
      return client.ping()
    })
    expect(reply).toBeInstanceOf(Unanswered)
  }
  expect(sent).toBe(0)
  expect(log.warnings).toHaveLength(1)
  expect(log.warnings[0]).toMatch(
    /^sluice: Redis is unavailable \(.+\); admitting every request until it answers again$/,
  )
  expect([log.away, log.refreshes]).toEqual([1, 1])
  const unanswered = (await node.call(KEY, () => client.ping())) as Unanswered
  const unavailable = node.unavailable(unanswered)
  expect(unavailable).toBeInstanceOf(StoreUnavailableError)
  expect(unavailable.cause).toBeInstanceOf(Error)

  await server.restart()
  await reconnected()
  // The probe writes at most every 50 ms while calls come in; once the client is back, the first one is answered.
  expect(await untilAnswered(node, log, 20)).toBe('PONG')
  expect(log.back).toBe(1)
  expect(log.infos).toHaveLength(1)
  expect(log.infos[0]).toMatch(/^sluice: Redis answers again after \d+ ms/)
  expect(log.warnings).toHaveLength(1)
  // The probe wrote in the slot that failed, on a key of its own that expires at once.
  const probes = await client.keys('sluice:probe:*')
  expect(probes).toEqual(['sluice:probe:{health}'])
  expect(await client.pttl('sluice:probe:{health}')).toBeLessThanOrEqual(1000)
})

test('an error Redis answers for the whole node (here, a command it refuses) starts an outage, and a logger without info() is fine', async () => {
  const { node, log } = recordingNode(false)
  expect(await node.call(KEY, () => client.call('NO-SUCH-COMMAND'))).toBeInstanceOf(Unanswered)
  expect(log.warnings[0]).toMatch(/unknown command/i)
  // Redis itself is fine: the next probe ends the outage.
  expect(await untilAnswered(node, log, 20)).toBe('PONG')
  expect(log.back).toBe(1)
})

test('a key error is the caller’s: no outage, nothing logged here', async () => {
  const { node, log } = recordingNode()
  await client.lpush('a-list', 'x')
  await expect(node.call(KEY, () => client.get('a-list'))).rejects.toThrow(/WRONGTYPE/)
  expect(shown(await node.call(KEY, () => client.ping()))).toBe('PONG')
  expect([log.warnings, log.away]).toEqual([[], 0])
})

test('a slot condition (TRYAGAIN) falls back for that call alone: no outage', async () => {
  const { node, log } = recordingNode()
  const tryAgain = () => Promise.reject(new Error('Too many Cluster redirections. Last error: ReplyError: TRYAGAIN x'))
  const answer = await node.call(KEY, tryAgain)
  expect(answer).toBeInstanceOf(Unanswered)
  expect(shown(await node.call(KEY, () => client.ping()))).toBe('PONG')
  expect([log.warnings, log.away]).toEqual([[], 0])
})

test('when the node is declared down, the calls still waiting on it fall back at once, with its cause', async () => {
  const { node } = recordingNode()
  const first = node.call(KEY, () => Promise.reject(new Error('connect ECONNREFUSED'))) // concerns the node
  const waiting = node.call(KEY, () => client.ping()) // sent, its reply not read yet
  expect(await first).toBeInstanceOf(Unanswered)
  const fellBack = await waiting
  expect(fellBack).toBeInstanceOf(Unanswered)
  expect(((fellBack as Unanswered).cause as Error).message).toBe('connect ECONNREFUSED') // not a timeout of its own
})
