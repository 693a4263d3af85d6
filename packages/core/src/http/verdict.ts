import type { Decision } from '../rules/decision'
import { type HeaderList, type HeaderMode, NO_STORE, retryAfterSeconds } from './headers'
import type { RequestFacts } from './keys'
import { responseHeaders } from './response-headers'

/**
 * The JSON body of a response the limiter wrote.
 *
 * @example
 * const body: RejectionBody = { error: 'rate limit exceeded', retryAfter: 18 }
 */
export interface RejectionBody {
  readonly error: string
  /** Seconds, as in Retry-After (429 only). */
  readonly retryAfter?: number
  /** The request's cost and the limit it can never fit (cost above capacity only). */
  readonly cost?: number
  readonly limit?: number
}

/** Why a request was answered at once; the shedder's and the concurrency limits' refusals name none. */
export type RejectionReason = 'rate-limited' | 'cost-exceeds-capacity' | 'store-unavailable' | 'forbidden'

/**
 * What the adapter does with a request, the one answer of every HTTP policy of the core (rate limits, concurrency
 * limits, the shedder). `headers` go on the response either way.
 *
 * @example
 * const verdict: HttpVerdict = await policy.handle(req, res, facts)
 * if (verdict.action === 'reject') console.log(verdict.reason, verdict.status)
 */
export type HttpVerdict =
  | { readonly action: 'skip' }
  | {
      readonly action: 'pass'
      /** The rate limit's decision; undefined when the store failed and `onError` is 'open', and for protection. */
      readonly decision?: Decision | undefined
      readonly headers?: HeaderList
    }
  | {
      readonly action: 'reject'
      /** 'rate-limited' is the one a custom `onRejected` answers; 'forbidden' is the `denyList`'s. */
      readonly reason?: RejectionReason
      readonly status: number
      readonly decision?: Decision | undefined
      readonly headers: HeaderList
      readonly body: RejectionBody
      /** `body` as JSON text when the policy made it (`application/json; charset=utf-8`); else it is made at writing. */
      readonly json?: string
    }

/**
 * The verdicts of a rate limit (`createHttpPolicy`): its rejections always name their reason and carry their JSON.
 *
 * @example
 * const verdict: LimitVerdict = await policy.handle(req, res, facts)
 * if (verdict.action === 'reject') res.end(verdict.json)
 */
export type LimitVerdict =
  | Exclude<HttpVerdict, { readonly action: 'reject' }>
  | (Extract<HttpVerdict, { readonly action: 'reject' }> & { readonly reason: RejectionReason; readonly json: string })

/**
 * What an adapter sees of a core HTTP policy: one request in, one verdict out, with the framework's request, its
 * response (the one the policy's events are read on) and the request's facts. The shedder reads no facts.
 *
 * @example
 * const policy: RequestPolicy<Request, Response> = createConcurrencyPolicy({ limit: 10 })
 * const verdict = await policy.handle(req, res, factsOf(req))
 */
export interface RequestPolicy<Req, Res> {
  handle(req: Req, res: Res, facts: RequestFacts): HttpVerdict | Promise<HttpVerdict>
}

/** A request the protection let through: on, with nothing to write. */
export const PASS: HttpVerdict = Object.freeze({ action: 'pass' })

/**
 * The status of a request whose cost can never fit (above the capacity of a rule): 413 Content Too Large, since
 * the request is larger than the server will ever accept under this limit (RFC 9110 s15.5.14), without Retry-After
 * because waiting does not help.
 */
const COST_EXCEEDS_CAPACITY_STATUS = 413

/** The JSON of a 429 body up to its one varying number, so a rejection formats the number and nothing else. */
const RATE_LIMITED_JSON = '{"error":"rate limit exceeded","retryAfter":'

/**
 * The last 429 body made, by its Retry-After: a flood of rejections answers the same body for a second at a time, and
 * one string, once measured and copied flat, costs the server less than a new one per response.
 */
const lastRejection = { retryAfter: 0, json: '' }

function rateLimitedJson(retryAfter: number): string {
  if (retryAfter !== lastRejection.retryAfter) {
    lastRejection.retryAfter = retryAfter
    lastRejection.json = `${RATE_LIMITED_JSON}${retryAfter}}`
  }
  return lastRejection.json
}

/**
 * The media type of every body the limiter writes: the type `JSON.stringify` output takes (RFC 8259), with the
 * charset Express, Koa and Fastify each add to their own JSON responses.
 */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** A skipped request: no count, no headers. */
export const SKIP: LimitVerdict = Object.freeze({ action: 'skip' })

/** A store that failed under `onError: 'open'`: the request goes on, uncounted. */
export const PASS_UNCOUNTED: LimitVerdict = Object.freeze({ action: 'pass', decision: undefined, headers: [] })

/** A store that could not decide: 503, so the client is told to come back, not that it is over its limit. */
export const STORE_UNAVAILABLE: LimitVerdict = Object.freeze({
  action: 'reject',
  reason: 'store-unavailable',
  status: 503,
  decision: undefined,
  headers: [NO_STORE],
  body: { error: 'rate limiter unavailable' },
  json: '{"error":"rate limiter unavailable"}',
})

/** What `verdictOf` reads from the settled options: the header modes and writer, the rejection status and the clock. */
export interface VerdictSettings {
  readonly headerModes: readonly HeaderMode[]
  readonly writeHeaders: (decision: Decision, nowMs: number) => [string, string][]
  readonly statusCode: number
  readonly clock: () => number
}
/**
 * A request on the `denyList`: 403, decided before the limiter, so without rate-limit headers. RFC 9111 s5.2.2.5:
 * no-store, since a shared cache must not answer other clients with this client's refusal.
 */
export const FORBIDDEN: LimitVerdict = Object.freeze({
  action: 'reject',
  reason: 'forbidden',
  status: 403,
  decision: undefined,
  headers: [NO_STORE],
  body: { error: 'forbidden' },
  json: '{"error":"forbidden"}',
})

/**
 * The verdict on a decision: on with its headers, or the rejection the decision calls for. `response` is the raw
 * response: the headers describe every limiter it has passed (see `responseHeaders`).
 */
export function verdictOf(decision: Decision, cost: number, settings: VerdictSettings, response: object): LimitVerdict {
  const headers = responseHeaders(response, decision, settings.headerModes, settings.writeHeaders, settings.clock())
  if (decision.allowed) return { action: 'pass', decision, headers }
  if (decision.costExceedsCapacity) {
    headers.push(NO_STORE as [string, string])
    const body = { error: 'request cost exceeds the rate limit', cost, limit: decision.limit }
    return {
      action: 'reject',
      reason: 'cost-exceeds-capacity',
      status: COST_EXCEEDS_CAPACITY_STATUS,
      decision,
      headers,
      body,
      json: JSON.stringify(body),
    }
  }
  const retryAfter = retryAfterSeconds(decision)
  // RFC 6585 s4 and RFC 9111 s5.2.2.5: a 429 describes this moment, so no cache may store and replay it.
  headers.push(['Retry-After', String(retryAfter)], NO_STORE as [string, string])
  return {
    action: 'reject',
    reason: 'rate-limited',
    status: settings.statusCode,
    decision,
    headers,
    body: { error: 'rate limit exceeded', retryAfter },
    json: rateLimitedJson(retryAfter),
  }
}

/**
 * How an adapter writes a verdict in its framework's terms. `rejected` is the user's custom `onRejected`, if any:
 * it answers rate-limit rejections only (not a cost above capacity or a store failure, which are not the client's
 * pace), after the headers are set.
 *
 * @example
 * const writer: VerdictWriter<void> = {
 *   next,
 *   decision: (decision) => { req.rateLimit = decision },
 *   header: (name, value) => res.setHeader(name, value),
 *   send: (status, _body, json) => { res.status(status).type('json').send(json) },
 * }
 */
export interface VerdictWriter<T> {
  /** Let the request go on (skipped, or admitted). */
  next(): T
  /** Put the decision on the request for the handler. */
  decision(decision: Decision): void
  header(name: string, value: string): void
  rejected?: ((decision: Decision) => T) | undefined
  /** Answer the request with `json`, the JSON text of `body`, as `JSON_CONTENT_TYPE`. */
  send(status: number, body: RejectionBody, json: string): T
}

/**
 * Carries a verdict out through an adapter's writer, in the same order for every framework: the decision on the
 * request, the headers, then on, or the custom rejection, or the policy's own response.
 *
 * @example
 * const verdict = await policy.handle(ctx, ctx.res, facts)
 * return writeVerdict(verdict, { next, decision, header, send })
 */
export function writeVerdict<T>(verdict: HttpVerdict, writer: VerdictWriter<T>): T {
  if (verdict.action === 'skip') return writer.next()
  if (verdict.decision !== undefined) writer.decision(verdict.decision)
  if (verdict.headers !== undefined) for (const [name, value] of verdict.headers) writer.header(name, value)
  if (verdict.action === 'pass') return writer.next()
  if (writer.rejected !== undefined && verdict.reason === 'rate-limited' && verdict.decision !== undefined) {
    return writer.rejected(verdict.decision)
  }
  return writer.send(verdict.status, verdict.body, verdict.json ?? JSON.stringify(verdict.body))
}
