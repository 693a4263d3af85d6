import type { HeaderList, RejectionBody, ResponseEvents } from '.'
import { onResponseEnd } from './response-end'

/**
 * What an adapter does with a request after a concurrency limit or the shedder: let it go on, or answer it now.
 *
 * @example
 * const verdict = await policy.handle(req, res)
 * if (verdict.action === 'reject') res.status(verdict.status).set(Object.fromEntries(verdict.headers)).json(verdict.body)
 */
export type ProtectVerdict =
  | { readonly action: 'pass' }
  | {
      readonly action: 'reject'
      readonly status: number
      readonly headers: HeaderList
      readonly body: RejectionBody
    }

/**
 * The raw Node response as the protection policies watch it: its end releases the request's slot. `closed` is
 * Node's `writable.closed`, true once the connection has closed.
 *
 * @example
 * const raw: ResponseLifecycle = res // Express; ctx.res in Koa, reply.raw in Fastify
 */
export interface ResponseLifecycle extends ResponseEvents {
  readonly closed?: boolean
}

export const PASS: ProtectVerdict = Object.freeze({ action: 'pass' })

/**
 * Calls `release` exactly once, when the response finishes or the connection closes (a client that aborts
 * included), whichever comes first. Watching starts before any await, so an abort during the decision is seen; if
 * the connection had closed before, `release` runs at once. One listener pair per response serves every Sluice
 * middleware on it (see `onResponseEnd`).
 */
export function releaseAtEnd(raw: ResponseLifecycle): { set(release: () => void): void } {
  let ended = raw.closed === true
  let release: (() => void) | undefined
  // Once ended, `release` stays undefined (set() runs a late one at once), so a second event finds nothing to run.
  const end = () => {
    ended = true
    const run = release
    release = undefined
    run?.()
  }
  onResponseEnd(raw, end)
  return {
    set(next) {
      if (ended) next()
      else release = next
    },
  }
}
