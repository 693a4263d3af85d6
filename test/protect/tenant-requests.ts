// Requests sent by tenant to a server on loopback, each recorded with the virtual times it was sent and answered at:
// what the over-HTTP shedding suites measure. Answers are counted, so a suite can tell when every request is settled.
import { Agent, request } from 'node:http'
import type { VirtualTime } from '../../examples/overload/virtual-time'

export interface Sent {
  readonly tenant: string
  readonly arrivedAt: number
  status?: number
  answeredAt?: number
}

export interface TenantRequests {
  /** Sends one GET / with `x-tenant: tenant`, now. */
  send(tenant: string): void
  /** Every request sent so far, in order. */
  readonly sent: readonly Sent[]
  /** How many of them were answered. */
  answered(): number
  /** Closes the sockets. */
  close(): void
}

/**
 * @example
 * const requests = tenantRequests(port, time, 256)
 * time.at(500, () => requests.send('small-1'))
 */
export function tenantRequests(port: number, time: VirtualTime, maxSockets: number): TenantRequests {
  const agent = new Agent({ keepAlive: true, maxSockets })
  const sent: Sent[] = []
  let answered = 0
  return {
    sent,
    answered: () => answered,
    close: () => agent.destroy(),
    send(tenant) {
      const record: Sent = { tenant, arrivedAt: time.now() }
      sent.push(record)
      const req = request({ host: '127.0.0.1', port, path: '/', agent, headers: { 'x-tenant': tenant } }, (res) => {
        res.resume()
        res.on('end', () => {
          record.status = res.statusCode ?? 0
          record.answeredAt = time.now()
          answered++
        })
      })
      req.end()
    },
  }
}
