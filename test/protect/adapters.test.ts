// shedLoad and concurrencyLimit over real HTTP, on every framework: the same cases, one table. Requests are held in
// their handlers until the test opens a gate, so what is in flight is decided by the test, not by timing; waits
// are for a state ("the line holds 3"), never for a duration.
import { type ClientRequest, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { Priority, ShedderOptions } from '@sluice/core'
import { frameworks, type ProtectApp, type ProtectFramework, type ProtectSpec } from './apps'

interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

interface Sent {
  readonly answer: Promise<Answer>
  /** Closes the connection, as a client that gives up does. */
  abort(): void
  readonly request: ClientRequest
}

/** Sends a GET; the answer resolves when the response has been read. */
function send(app: ProtectApp, path: string, headers: Record<string, string> = {}): Sent {
  const request = httpRequest(`${app.url}${path}`, { headers, agent: false })
  const answer = new Promise<Answer>((resolve, reject) => {
    request.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: text === '' ? undefined : JSON.parse(text),
        }),
      )
    })
    request.on('error', (error) => {
      if (!request.destroyed) reject(error)
    })
  })
  answer.catch(() => undefined)
  request.end()
  return { answer, request, abort: () => request.destroy() }
}

/** Resolves once `condition()` holds; fails after 10 s (a state that never comes, not a slow machine). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const priorityOf = (req: { headers: IncomingHttpHeaders }) => (req.headers['x-priority'] ?? 'normal') as Priority

interface Case {
  readonly name: string
  run(start: (spec: ProtectSpec) => Promise<ProtectApp>): Promise<void>
}

const shedOnly = (options: ShedderOptions & Omit<NonNullable<ProtectSpec['shed']>, keyof ShedderOptions>) => ({
  shed: options,
})

const cases: Case[] = [
  {
    name: 'shedLoad answers 503 with Retry-After, no-store and {"error":"overloaded","retryAfter":1}',
    async run(start) {
      const app = await start(shedOnly({ maxInFlight: 1, queue: 0 }))
      const held = send(app, '/hold?id=a')
      await until(() => app.handlers.running === 1, 'the first request runs')
      const shed = await send(app, '/hold?id=b').answer
      expect(shed.status).toBe(503)
      expect(shed.headers['retry-after']).toBe('1')
      expect(shed.headers['cache-control']).toBe('no-store')
      expect(shed.headers['content-type']).toMatch(/^application\/json/)
      expect(shed.body).toEqual({ error: 'overloaded', retryAfter: 1 })
      app.handlers.openGate()
      expect((await held.answer).status).toBe(200)
      expect(app.handlers.started).toEqual(['a'])
    },
  },
  {
    name: 'shedLoad decides before the body is read: a 50 MB upload is shed unread',
    async run(start) {
      const app = await start(shedOnly({ maxInFlight: 1, queue: 0 }))
      const held = send(app, '/hold?id=a')
      await until(() => app.handlers.running === 1, 'the first request runs')
      const parsedBefore = app.parsed()
      const size = 50 * 1024 * 1024
      const upload = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
        const req = httpRequest(`${app.url}/upload`, {
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/octet-stream', 'content-length': size },
        })
        let sent = 0
        req.on('response', (res) => {
          res.resume()
          req.destroy()
          resolve({ status: res.statusCode ?? 0, sent })
        })
        req.on('error', (error) => {
          if (!req.destroyed) reject(error)
        })
        // Only the first 64 KiB go out; the rest would follow only if the server read on.
        const chunk = Buffer.alloc(64 * 1024)
        sent += chunk.length
        req.write(chunk)
      })
      expect(upload.status).toBe(503)
      expect(upload.sent).toBeLessThan(size)
      expect(app.parsed()).toBe(parsedBefore)
      app.handlers.openGate()
      await held.answer
    },
  },
  {
    name: 'a client that aborts mid-request frees its slot, and one that aborts while waiting leaves the line',
    async run(start) {
      const app = await start(shedOnly({ maxInFlight: 1, queue: 1, maxWait: '30s' }))
      const shedder = app.shedder as NonNullable<ProtectApp['shedder']>
      const first = send(app, '/hold?id=a')
      await until(() => app.handlers.running === 1, 'the first request runs')
      const waiter = send(app, '/hold?id=b')
      await until(() => shedder.waiting === 1, 'the second request waits')
      waiter.abort()
      await until(() => shedder.waiting === 0, 'the aborted waiter left the line')
      first.abort()
      await until(() => shedder.inFlight === 0, 'the aborted request freed its slot')
      // The handler of the aborted request still runs (it cannot know), but the slot is free for the next client.
      const next = send(app, '/hold?id=c')
      await until(() => app.handlers.started.includes('c'), 'the next request starts')
      app.handlers.openGate()
      expect((await next.answer).status).toBe(200)
      expect(app.handlers.started).toEqual(['a', 'c'])
    },
  },
  {
    name: 'waiters start by priority (critical, normal, sheddable), and a full line drops the least important',
    async run(start) {
      const app = await start(
        shedOnly({
          maxInFlight: 1,
          queue: 3,
          maxWait: '30s',
          // The case is about start order: a standing-queue bound must not shed a waiter when a loaded machine is
          // slow to start the ones before it.
          queueTarget: '30s',
          priority: priorityOf,
        }),
      )
      const shedder = app.shedder as NonNullable<ProtectApp['shedder']>
      const first = send(app, '/hold?id=first')
      await until(() => app.handlers.running === 1, 'the first request runs')
      const queued: Sent[] = []
      for (const [id, priority] of [
        ['s1', 'sheddable'],
        ['n1', 'normal'],
        ['s2', 'sheddable'],
      ] as const) {
        queued.push(send(app, `/hold?id=${id}`, { 'x-priority': priority }))
        await until(() => shedder.waiting === queued.length, `${id} waits`)
      }
      // The line is full: a critical arrival takes the place of the newest sheddable waiter, which is shed.
      const critical = send(app, '/hold?id=c1', { 'x-priority': 'critical' })
      const evicted = await (queued[2] as Sent).answer
      expect(evicted.status).toBe(503)
      expect(shedder.waiting).toBe(3)
      // A sheddable arrival finds nothing less important to drop: it is shed itself.
      expect((await send(app, '/hold?id=s3', { 'x-priority': 'sheddable' }).answer).status).toBe(503)
      app.handlers.openGate()
      for (const sent of [first, critical, queued[0] as Sent, queued[1] as Sent]) {
        expect((await sent.answer).status).toBe(200)
      }
      expect(app.handlers.started).toEqual(['first', 'c1', 'n1', 's1'])
    },
  },
  {
    name: 'a waiter is answered 503 at its deadline, while the slot is still taken, and never starts',
    async run(start) {
      const app = await start(shedOnly({ maxInFlight: 1, queue: 1, maxWait: '200ms' }))
      const first = send(app, '/hold?id=a')
      await until(() => app.handlers.running === 1, 'the first request runs')
      const sentAt = performance.now()
      const late = await send(app, '/hold?id=b').answer
      const waitedMs = performance.now() - sentAt
      expect(late.status).toBe(503)
      expect(late.body).toEqual({ error: 'overloaded', retryAfter: 1 })
      // Answered by its deadline's timer: not before the deadline, and while the holder still runs.
      expect(waitedMs).toBeGreaterThanOrEqual(200)
      expect(app.handlers.running).toBe(1)
      app.handlers.openGate()
      await first.answer
      expect(app.handlers.started).toEqual(['a'])
    },
  },
  {
    name: 'in flight never exceeds maxInFlight under a burst of 40 concurrent requests',
    async run(start) {
      const app = await start(shedOnly({ maxInFlight: 3 }))
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => send(app, `/work?id=${i}`).answer))
      const statuses = answers.map((a) => a.status)
      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([])
      expect(statuses.filter((s) => s === 200).length).toBe(app.handlers.started.length)
      expect(app.handlers.mostRunning).toBe(3)
      expect(app.shedder?.inFlight).toBe(0)
    },
  },
  {
    name: 'skip lets a request bypass the shedder',
    async run(start) {
      const app = await start(shedOnly({ maxInFlight: 1, queue: 0, skip: (req) => req.headers['x-health'] === '1' }))
      const held = send(app, '/hold?id=a')
      await until(() => app.handlers.running === 1, 'the first request runs')
      // The request that is not skipped holds the only slot; the skipped one takes none.
      expect(app.shedder?.inFlight).toBe(1)
      const health = send(app, '/hold?id=health', { 'x-health': '1' })
      await until(() => app.handlers.running === 2, 'the skipped request runs')
      expect(app.shedder?.inFlight).toBe(1)
      expect((await send(app, '/hold?id=b').answer).status).toBe(503)
      app.handlers.openGate()
      expect((await health.answer).status).toBe(200)
      await held.answer
    },
  },
  {
    name: 'an async skip that resolves true bypasses the shedder: the health check is not answered 503',
    async run(start) {
      const app = await start(
        shedOnly({ maxInFlight: 1, queue: 0, skip: async (req) => req.headers['x-health'] === '1' }),
      )
      const held = send(app, '/hold?id=a')
      await until(() => app.handlers.running === 1, 'the first request runs')
      const health = send(app, '/hold?id=health', { 'x-health': '1' })
      await until(() => app.handlers.running === 2, 'the skipped request runs')
      expect(app.shedder?.inFlight).toBe(1)
      // A promise of false is not a skip: the request is shed as any other.
      expect((await send(app, '/hold?id=b').answer).status).toBe(503)
      app.handlers.openGate()
      expect((await health.answer).status).toBe(200)
      await held.answer
      expect(app.handlers.started).toEqual(['a', 'health'])
    },
  },
  {
    name: 'concurrencyLimit answers 429 with Retry-After while a key has its limit in flight; other keys pass',
    async run(start) {
      const app = await start({ concurrency: { limit: 2, key: (req) => String(req.headers['x-key']) } })
      const held = [send(app, '/hold?id=a1', { 'x-key': 'a' }), send(app, '/hold?id=a2', { 'x-key': 'a' })]
      await until(() => app.handlers.running === 2, 'two requests of key a run')
      const refused = await send(app, '/hold?id=a3', { 'x-key': 'a' }).answer
      expect(refused.status).toBe(429)
      expect(refused.headers['retry-after']).toBe('1')
      expect(refused.headers['cache-control']).toBe('no-store')
      expect(refused.body).toEqual({ error: 'too many requests in flight', retryAfter: 1 })
      const other = send(app, '/hold?id=b1', { 'x-key': 'b' })
      await until(() => app.handlers.running === 3, 'key b runs')
      app.handlers.openGate()
      for (const sent of [...held, other]) expect((await sent.answer).status).toBe(200)
      expect(app.limiter?.held).toBe(0)
      expect((await send(app, '/hold?id=a4', { 'x-key': 'a' }).answer).status).toBe(200)
    },
  },
  {
    name: 'concurrencyLimit keys a spoofed X-Forwarded-For (trust proxy off) by the connection address, with one warning',
    async run(start) {
      const warnings: string[] = []
      const logger = { warn: (message: string) => warnings.push(message), error() {} }
      const app = await start({ concurrency: { limit: 1, logger } })
      // Each request claims another client: all are one connection address, so the second is refused.
      const first = send(app, '/hold?id=a', { 'x-forwarded-for': '203.0.113.1' })
      await until(() => app.handlers.running === 1, 'the first request runs')
      expect((await send(app, '/hold?id=b', { 'x-forwarded-for': '203.0.113.2' }).answer).status).toBe(429)
      expect((await send(app, '/hold?id=c', { 'x-forwarded-for': '203.0.113.3' }).answer).status).toBe(429)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/X-Forwarded-For, but the framework does not trust the proxy/)
      app.handlers.openGate()
      expect((await first.answer).status).toBe(200)
    },
  },
  {
    name: 'concurrencyLimit: a client that aborts frees its slot, exactly once',
    async run(start) {
      const app = await start({ concurrency: { limit: 1 } })
      const limiter = app.limiter as NonNullable<ProtectApp['limiter']>
      const first = send(app, '/hold?id=a')
      await until(() => app.handlers.running === 1, 'the first request runs')
      expect((await send(app, '/hold?id=b').answer).status).toBe(429)
      first.abort()
      await until(() => limiter.held === 0, 'the aborted request freed its slot')
      const next = send(app, '/hold?id=c')
      await until(() => app.handlers.started.includes('c'), 'the next request starts')
      expect(limiter.held).toBe(1)
      // The aborted request's handler finishes now; its slot, released already, is not released again.
      app.handlers.openGate()
      expect((await next.answer).status).toBe(200)
      await until(() => limiter.held === 0, 'the last slot is released')
      expect((await send(app, '/hold?id=d').answer).status).toBe(200)
    },
  },
]

describe.each(frameworks.map((framework): [string, ProtectFramework] => [framework.name, framework]))(
  '%s',
  (_, framework) => {
    const running: ProtectApp[] = []
    const start = async (spec: ProtectSpec) => {
      const app = await framework.start(spec)
      running.push(app)
      return app
    }
    afterEach(async () => {
      const apps = running.splice(0)
      await Promise.all(apps.map((app) => app.close()))
      expect(apps.flatMap((app) => app.failures)).toEqual([])
    })
    it.each(cases.map((c): [string, Case] => [c.name, c]))('%s', (_name, c) => c.run(start))
  },
)
