/**
 * The raw Node response beneath a framework's response (Express `res`, Koa `ctx.res`, Fastify `reply.raw`): its end
 * runs `refund` and gives back the slots of the protection policies.
 *
 * @example
 * const events: ResponseEvents = reply.raw
 */
export interface ResponseEvents {
  once(event: 'finish' | 'close', listener: () => void): unknown
}

/**
 * What every Sluice middleware on one response waits for, kept once per response: the callbacks to run when it
 * ends, behind a single 'finish' and a single 'close' listener. Six middlewares (rate limits with a `refund`,
 * concurrency limits, the shedder) each adding a pair of their own passed Node's default of 10 listeners per event
 * and printed a MaxListenersExceededWarning.
 */
class ResponseEnd {
  ended = false
  callbacks: (() => void)[] = []

  readonly fire = () => {
    if (this.ended) return
    this.ended = true
    const { callbacks } = this
    this.callbacks = []
    for (const callback of callbacks) callback()
  }
}

const ENDS = new WeakMap<ResponseEvents, ResponseEnd>()

/**
 * Runs `callback` once, when the response finishes or its connection closes, whichever comes first; at once if it
 * already has. Every Sluice middleware on a response shares one 'finish' and one 'close' listener.
 *
 * @example
 * onResponseEnd(res, () => slot.release()) // Express; ctx.res in Koa, reply.raw in Fastify
 */
export function onResponseEnd(raw: ResponseEvents, callback: () => void): void {
  let end = ENDS.get(raw)
  if (end === undefined) {
    end = new ResponseEnd()
    ENDS.set(raw, end)
    raw.once('finish', end.fire)
    raw.once('close', end.fire)
  }
  if (end.ended) callback()
  else end.callbacks.push(callback)
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

/**
 * Calls `release` exactly once, when the response finishes or the connection closes (a client that aborts
 * included), whichever comes first. Watching starts before any await, so an abort during the decision is seen; if
 * the connection had closed before, `release` runs at once. One listener pair per response serves every Sluice
 * middleware on it (see `onResponseEnd` above).
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
