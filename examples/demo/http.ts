import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { createLimiter, MemoryStore } from '@sluice/core'
import { rateLimit } from '@sluice/express'
import express from 'express'
import { ALGORITHMS, type Decide, LIMIT, ORIGIN, WINDOW_MS } from './experiment'

/** One response as the demo prints it. */
export interface Exchange {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * An Express app on the embedded memory store: one route per algorithm (`GET /fixed-window` ...), each limited by
 * `rateLimit` keyed on the client's address, and `GET /leaky-queue`, which takes a place in a leaky-bucket queue
 * and answers when the request may go. The stores share a virtual clock that the demo moves before each request,
 * so the experiment's 5 seconds take a few milliseconds and come out the same every time.
 */
export async function startDemoServer() {
  const time = { now: ORIGIN }
  const clock = () => time.now
  const app = express()
  for (const algorithm of ALGORITHMS) {
    const store = new MemoryStore({ clock })
    app.get(
      `/${algorithm}`,
      rateLimit({ algorithm, limit: LIMIT, window: WINDOW_MS, store, headers: ['ietf', 'legacy'], clock }),
      (_req, res) => {
        res.json({ ok: true })
      },
    )
  }
  const queue = createLimiter({
    algorithm: 'leaky-bucket',
    limit: LIMIT,
    window: WINDOW_MS,
    store: new MemoryStore({ clock }),
  })
  app.get('/leaky-queue', async (req, res) => {
    const decision = await queue.enqueue(req.ip ?? 'unknown')
    // A real service would hold the request for delayMs (limiter.schedule does); the demo reports the delay.
    res.status(decision.allowed ? 200 : 429).json({ allowed: decision.allowed, delayMs: decision.delayMs })
  })
  const server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  async function send(path: string): Promise<Exchange> {
    const response = await fetch(`${base}${path}`)
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      headers[name] = value
    })
    return { status: response.status, headers, body: await response.text() }
  }

  /** Decides over HTTP: each arrival is one request at virtual time `at`. */
  function overHttp(algorithm: string): Decide {
    return async function decide(at) {
      time.now = ORIGIN + at
      const { status, body } = await send(`/${algorithm}`)
      if (algorithm === 'leaky-queue') {
        const answer = JSON.parse(body) as { allowed: boolean; delayMs: number }
        return { allowed: answer.allowed, delayMs: answer.delayMs }
      }
      return { allowed: status === 200, delayMs: 0 }
    }
  }

  return {
    time,
    send,
    overHttp,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
