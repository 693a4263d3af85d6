import type { ResponseEvents } from './options'

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
