import type { Priority } from '../protect/priority'
import { createShedder, type ShedderOptions } from '../protect/shedder'
import type { Shedder, ShedReason, Ticket } from '../protect/shedder-core'
import { namedChannel } from '../runtime/builtins'
import { checkFunction, checkObject, checkOneOf } from '../util/checks'
import { describe } from '../util/errors'
import { type EventKeys, keyHash } from '../util/key-hash'
import { NO_STORE, retryAfterSeconds } from './headers'
import type { RequestFacts } from './keys'
import { type ResponseLifecycle, releaseAtEnd } from './response-end'
import { type HttpVerdict, PASS, type RequestPolicy } from './verdict'

/**
 * The options every adapter's `shedLoad` takes: the shedder's, and how to read a request's priority and tenant.
 * `Req` is the framework's request (Koa: the context). The functions run in the earliest hook, before the body is
 * read or the user authenticated, so they read what the request line and headers say.
 *
 * @example
 * const options: HttpShedOptions<Request> = {
 *   maxInFlight: 64,
 *   priority: (req) => (req.path.startsWith('/checkout') ? 'critical' : req.get('x-prefetch') ? 'sheddable' : 'normal'),
 *   tenant: (req) => req.get('x-tenant') ?? 'anonymous',
 * }
 */
export interface HttpShedOptions<Req> extends ShedderOptions {
  /** The request's priority. Default: every request `'normal'`. */
  priority?: (req: Req) => Priority
  /** Who the request is for; tenants share the slots fairly under contention. Default: one tenant for all. */
  tenant?: (req: Req) => string
  /**
   * Requests for which it returns (or resolves to) true bypass the shedder: a health check the load balancer must
   * always get. An async `skip` is awaited before the request takes a place.
   */
  skip?: (req: Req) => boolean | Promise<boolean>
  /**
   * How `sluice:shed` events show the tenant: `'hash'` (the default) as `tenantHash` only, `'raw'` adds `tenant`.
   * Tenants come from API keys and customer ids, which must not reach logs unasked.
   */
  eventKeys?: EventKeys
}

/**
 * The shedding policy of one `shedLoad`, built once; `handle` runs per request.
 *
 * @example
 * const policy: HttpShedPolicy<Request> = createShedPolicy({ maxInFlight: 64 })
 * console.log(policy.shedder.inFlight)
 */
export interface HttpShedPolicy<Req> extends RequestPolicy<Req, ResponseLifecycle> {
  readonly shedder: Shedder
  /**
   * Admits (the slot is released when the response ends), or answers 503; may wait for a slot first. The shedder
   * looks at this instance's health, not at the client: it reads no request facts.
   */
  handle(req: Req, res: ResponseLifecycle, facts?: RequestFacts): HttpVerdict | Promise<HttpVerdict>
}

/**
 * A shed request, published on the `sluice:shed` diagnostics channel (nothing is built when nobody subscribes).
 *
 * @example
 * import { subscribe } from 'node:diagnostics_channel'
 * subscribe('sluice:shed', (message) => metrics.increment(`shed.${(message as ShedEvent).reason}`))
 */
export interface ShedEvent {
  readonly reason: ShedReason
  readonly priority: Priority
  /** The first 16 hex digits of the SHA-256 of the tenant (see `keyHash`); of '' when there is no `tenant`. */
  readonly tenantHash: string
  /** The tenant itself, only with `eventKeys: 'raw'`. */
  readonly tenant?: string
  readonly waitedMs: number
  readonly inFlight: number
  readonly waiting: number
}

const shedChannel = namedChannel('sluice:shed')
// 503 and not 429: the service is overloaded, not this client over its limit (RFC 9110 s15.6.4).
const OVERLOADED_STATUS = 503

/**
 * Builds the shedding policy the adapters share: the shedder, the request's priority and tenant, the 503 and the
 * release of the slot when the response ends or the client goes away. Invalid options throw an
 * `InvalidOptionError` naming the option.
 *
 * @example
 * const policy = createShedPolicy<Request>({ maxInFlight: 64, queue: 128, maxWait: '2s' })
 * const verdict = await policy.handle(req, res, factsOf(req))
 */
export function createShedPolicy<Req>(options: HttpShedOptions<Req>): HttpShedPolicy<Req> {
  checkObject(options, 'options')
  const { priority, tenant, skip, eventKeys = 'hash', ...shedderOptions } = options
  checkFunction(priority, 'priority')
  checkFunction(tenant, 'tenant')
  checkFunction(skip, 'skip')
  const rawTenants = checkOneOf(eventKeys, 'eventKeys', ['hash', 'raw'] as const) === 'raw'
  const shedder = createShedder(shedderOptions as ShedderOptions)

  const refuse = (ticket: Ticket): HttpVerdict => {
    if (ticket.state === 'shed' && shedChannel.hasSubscribers) {
      const event: ShedEvent = {
        reason: ticket.reason as ShedReason,
        priority: ticket.priority,
        tenantHash: keyHash(ticket.tenant),
        ...(rawTenants ? { tenant: ticket.tenant } : {}),
        waitedMs: ticket.waitedMs,
        inFlight: shedder.inFlight,
        waiting: shedder.waiting,
      }
      shedChannel.publish(event)
    }
    const retryAfter = retryAfterSeconds(ticket)
    return {
      action: 'reject',
      status: OVERLOADED_STATUS,
      headers: [['Retry-After', String(retryAfter)], NO_STORE],
      body: { error: 'overloaded', retryAfter },
    }
  }

  const admit = (req: Req, raw: ResponseLifecycle, end = releaseAtEnd(raw)): HttpVerdict | Promise<HttpVerdict> => {
    const request: { priority?: Priority; tenant?: string } = {}
    if (priority !== undefined) request.priority = priority(req)
    if (tenant !== undefined) {
      const name = tenant(req)
      if (typeof name !== 'string') {
        throw new TypeError(`sluice: option "tenant" must return a string (got ${describe(name)})`)
      }
      request.tenant = name
    }
    const ticket = shedder.admit(request)
    if (ticket.state === 'shed') return refuse(ticket)
    // From here the request holds a place (a slot, or one in line): the end of the response gives it back.
    end.set(() => ticket.release())
    if (ticket.state === 'running') return PASS
    // A client that went away while waiting has left the line; its refusal is never read.
    return ticket.decided().then((decided) => (decided.state === 'running' ? PASS : refuse(decided)))
  }

  return {
    shedder,
    handle(req, raw) {
      const skipped = skip?.(req)
      if (skipped === true) return PASS
      if (!(skipped instanceof Promise)) return admit(req, raw)
      // Watch the response before the await: a client that goes away meanwhile is seen, and takes no place.
      const end = releaseAtEnd(raw)
      return skipped.then((yes) => (yes === true ? PASS : admit(req, raw, end)))
    },
  }
}
