import { StoreUnavailableError } from '@sluice/core/store'
import Redis from 'ioredis'
import { type RedisServer, startRedis } from '../../../scripts/redis-server'
import { AWAY, Health } from '../src/health'

let server: RedisServer
let client: Redis

beforeAll(async () => {
  server = await startRedis()
  // A short, steady reconnect delay, so the test sees Redis come back soon after it does.
  client = new Redis({ host: server.host, port: server.port, retryStrategy: () => 20 })
  client.on('error', () => {}) // connection errors while the server is down are expected here
  await client.ping()
})

afterAll(async () => {
  client?.disconnect()
  await server?.stop()
})

function recordingHealth(withInfo = true) {
  const log = { warnings: [] as string[], infos: [] as string[], recoveries: 0 }
  const logger = { warn: (m: string) => log.warnings.push(m), error: () => {} }
  const health = new Health({
    ping: () => client.ping(),
    timeoutMs: 100,
    probeIntervalMs: 50,
    logger: withInfo ? { ...logger, info: (m: string) => log.infos.push(m) } : logger,
    meanwhile: 'admitting every request',
    onRecovery: () => log.recoveries++,
  })
  return { health, log }
}

/** Calls `health.call` every 20 ms until Redis does the work, within `withinMs`. */
async function untilAnswered(health: Health, withinMs: number): Promise<unknown> {
  const deadline = Date.now() + withinMs
  for (;;) {
    const reply = await health.call(() => client.ping())
    if (reply !== AWAY || Date.now() > deadline) return reply
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

test('an outage is logged once, sends nothing to Redis while it lasts, and ends, logged once, when Redis is back', async () => {
  const { health, log } = recordingHealth()
  expect(await health.call(() => client.ping())).toBe('PONG')

  await server.kill()
  expect(await health.call(() => client.ping())).toBe(AWAY)
  let sent = 0
  for (let i = 0; i < 20; i++) {
    const reply = await health.call(() => {
      sent++
      return client.ping()
    })
    expect(reply).toBe(AWAY)
  }
  expect(sent).toBe(0)
  expect(log.warnings).toHaveLength(1)
  expect(log.warnings[0]).toMatch(
    /^sluice: Redis is unavailable \(.+\); admitting every request until it answers again$/,
  )
  const unavailable = health.unavailable()
  expect(unavailable).toBeInstanceOf(StoreUnavailableError)
  expect(unavailable.cause).toBeInstanceOf(Error)

  await server.restart()
  // The probe PINGs at most every 50 ms while calls come in; a few seconds covers ioredis's reconnection.
  expect(await untilAnswered(health, 10_000)).toBe('PONG')
  expect(log.recoveries).toBe(1)
  expect(log.infos).toHaveLength(1)
  expect(log.infos[0]).toMatch(/^sluice: Redis answers again after \d+ ms/)
  expect(log.warnings).toHaveLength(1)
})

test('a call that Redis answers with an error starts an outage too, and a logger without info() is fine', async () => {
  const { health, log } = recordingHealth(false)
  expect(await health.call(() => client.call('NO-SUCH-COMMAND'))).toBe(AWAY)
  expect(log.warnings[0]).toMatch(/unknown command/i)
  // Redis itself is fine: the next probe ends the outage.
  expect(await untilAnswered(health, 5000)).toBe('PONG')
  expect(log.recoveries).toBe(1)
})
