import type { Decision } from '@sluice/core'
import type { RequestFacts, ResponseLifecycle } from '@sluice/core/internal'
import type { RequestReader } from './step'

/**
 * How a request's exchange ended, as `refund(req, outcome)` sees it: the status the handler answered (500 when it
 * threw) and its response.
 *
 * @example
 * rateLimit({ limit: 100, window: '1m', refund: (_req, outcome) => outcome.status >= 500 })
 */
export interface FetchOutcome {
  readonly status: number
  /** Undefined when the handler threw. */
  readonly response: Response | undefined
}

type Listener = () => void

/**
 * One request's exchange, as the core's policies watch a response end: `'finish'` once the response's body has
 * been read to its end (at once for a response without a body), `'close'` when the reader gave up on it or the
 * handler threw. A fetch handler has no socket to watch, so the end of its body stands for the end of the response.
 */
export class Exchange implements FetchOutcome, ResponseLifecycle {
  status = 500
  response: Response | undefined = undefined
  closed = false
  private listeners: [event: string, listener: Listener][] | undefined

  once(event: 'finish' | 'close', listener: Listener): this {
    this.listeners ??= []
    this.listeners.push([event, listener])
    return this
  }

  /** Whether anything waits for the end: only then is the response's body watched. */
  get watched(): boolean {
    return this.listeners !== undefined
  }

  /** Runs the listeners of `event`, each once; the first end is the only one. */
  end(event: 'finish' | 'close'): void {
    if (this.closed) return
    this.closed = true
    const listeners = this.listeners ?? []
    this.listeners = undefined
    for (const [name, listener] of listeners) if (name === event) listener()
  }

  /**
   * The handler's response, watched to its end when something waits for it. With several limits on one request the
   * innermost settles it first; an outer one finds it settled, and changes nothing.
   */
  settle(response: Response): Response {
    if (this.response !== undefined) return response
    this.status = response.status
    this.response = response
    if (!this.watched) return response
    if (response.body === null) {
      this.end('finish')
      return response
    }
    return new Response(watchedBody(response.body, this), response)
  }

  /** The handler threw: nothing was answered. */
  fail(): void {
    this.status = 500
    this.response = undefined
    this.end('close')
  }
}

/** The same bytes, telling the exchange when the reader has read them all or cancelled. */
function watchedBody(body: ReadableStream<Uint8Array>, exchange: Exchange): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          exchange.end('finish')
        } else controller.enqueue(value)
      } catch (error) {
        controller.error(error)
        exchange.end('close')
      }
    },
    async cancel(reason) {
      exchange.end('close')
      await reader.cancel(reason)
    },
  })
}

/**
 * Headers as a plain object with lower-case names, the shape the core's key functions and warnings read; a
 * header sent several times is one comma-joined value, as `Headers` keeps it.
 *
 * @example
 * headerRecord(new Headers({ 'X-Api-Key': 'k1' })) // { 'x-api-key': 'k1' }
 */
export function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {}
  headers.forEach((value, name) => {
    record[name] = value
  })
  return record
}

/**
 * The client's address as the common fetch servers report it, from what they pass beside the request: Deno's
 * `ServeHandlerInfo` (`remoteAddr.hostname`), Bun's `Server` (`requestIP(request)`), Node's fetch adapters that hand
 * over the Node request (`incoming.socket.remoteAddress`, as Hono's Node server does). Undefined when none of
 * these is there: a Worker or an edge function reports the client in a header of its platform, which only the
 * application can know to trust (`ip`).
 *
 * @example
 * Deno.serve((request, info) => new Response(peerAddress(request, info)))
 */
export function peerAddress(request: Request, env: unknown): string | undefined {
  if (typeof env !== 'object' || env === null) return undefined
  const deno = (env as { remoteAddr?: { hostname?: unknown } }).remoteAddr
  if (typeof deno?.hostname === 'string') return deno.hostname
  const bun = env as { requestIP?: (request: Request) => { address?: unknown } | null }
  if (typeof bun.requestIP === 'function') {
    const address = bun.requestIP(request)?.address
    return typeof address === 'string' ? address : undefined
  }
  const node = (env as { incoming?: { socket?: { remoteAddress?: unknown } } }).incoming?.socket?.remoteAddress
  return typeof node === 'string' ? node : undefined
}

/**
 * The facts the core's policies read of a request: its client address (from the `ip` option, or what the server
 * handed over beside it), recorded for `ipKey`, and its method, path and headers.
 */
export function clientFacts<Req>(
  req: Req,
  env: unknown,
  reader: RequestReader<Req>,
  ip: ((req: Req, env: unknown) => string | undefined) | undefined,
): RequestFacts {
  const request = reader.request(req)
  const address = ip === undefined ? peerAddress(request, reader.env(req, env)) : ip(req, env)
  clientAddresses.set(request, address)
  return {
    ip: address,
    method: request.method,
    path: reader.path(req),
    headers: headerRecord(request.headers),
    // A fetch adapter never reads X-Forwarded-For; an `ip` function that does is the application's own trust.
    trustsProxy: () => ip !== undefined,
  }
}

/** The client address of a request for `ipKey`: the one a limit found for it, or what the server handed over. */
export function knownAddress(request: Request, env: unknown): string | undefined {
  return clientAddresses.has(request) ? clientAddresses.get(request) : peerAddress(request, env)
}

/**
 * A response carrying `headers` too: set on it, or on a copy when its headers are immutable (a fetched response).
 * A field it has already is kept: the handler's own, or an inner limit's, which was decided later and describes every
 * limit the request passed.
 */
export function withHeaders(response: Response, headers: readonly (readonly [string, string])[]): Response {
  const missing = headers.filter(([name]) => !response.headers.has(name))
  if (missing.length === 0) return response
  try {
    for (const [name, value] of missing) response.headers.set(name, value)
    return response
  } catch {
    const copy = new Response(response.body, response)
    for (const [name, value] of missing) copy.headers.set(name, value)
    return copy
  }
}

/** Where a fetch adapter keeps the decision for the handler. */
export const decisions = new WeakMap<Request, Decision>()

/**
 * The client address a limit found for each request it saw (from its `ip` option, or from the server), so that
 * `ipKey(request)` in a key function or a handler keys the request as the limit does.
 */
export const clientAddresses = new WeakMap<Request, string | undefined>()

const exchanges = new WeakMap<Request, Exchange>()

/** The exchange of a request: one, whichever limits and protections it passes, as one Node response is. */
export function exchangeOf(request: Request): Exchange {
  let exchange = exchanges.get(request)
  if (exchange === undefined) {
    const created = new Exchange()
    exchanges.set(request, created)
    // A client that went away: the server aborts the request's signal (Hono's Node server, Deno, Bun do).
    const { signal } = request
    if (signal?.aborted) created.end('close')
    else signal?.addEventListener('abort', () => created.end('close'), { once: true })
    exchange = created
  }
  return exchange
}
