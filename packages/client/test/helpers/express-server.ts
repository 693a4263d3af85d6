import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { MemoryStore } from '@sluice/core'
import { type ExpressRateLimitOptions, rateLimit } from '@sluice/express'
import express from 'express'

/** A second-aligned epoch, so that the windows of the server's fixed-window limiter start at virtual time 0. */
export const EPOCH = Date.UTC(2026, 10, 30, 0, 0, 0)

export interface LimitedServer {
  url: string
  /** The virtual time of every request that reached the server, before the limiter ran. */
  arrivals: number[]
  /** The Idempotency-Key of every request, in order. */
  keys: (string | undefined)[]
  close(): Promise<void>
}

/**
 * A real @sluice/express server on 127.0.0.1 whose limiter (and Date header) read `clock`, the virtual time in ms
 * since {@link EPOCH}, so that Retry-After values are exact and a test controls when windows open.
 */
export async function startLimitedServer(
  clock: () => number,
  options: ExpressRateLimitOptions,
): Promise<LimitedServer> {
  const arrivals: number[] = []
  const keys: (string | undefined)[] = []
  const wallClock = () => EPOCH + clock()
  const app = express()
  app.use((req, res, next) => {
    arrivals.push(clock())
    keys.push(req.get('idempotency-key'))
    // The client measures HTTP-dates and Unix resets from the server's Date header: it must tell virtual time too.
    res.setHeader('Date', new Date(wallClock()).toUTCString())
    next()
  })
  app.use(rateLimit({ ...options, store: new MemoryStore({ clock: wallClock }), clock: wallClock }))
  app.use((_req, res) => {
    res.type('text').send('served')
  })
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening))
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    keys,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((err) => (err ? reject(err) : resolve()))
      }),
  }
}
