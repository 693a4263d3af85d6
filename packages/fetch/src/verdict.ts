import type { Decision } from '@sluice/core'
import { type HttpVerdict, JSON_CONTENT_TYPE } from '@sluice/core/internal'
import { type Exchange, withHeaders } from './exchange'
import type { Step } from './step'

/**
 * Writes a verdict of any Sluice policy the fetch way, as the step the handler's wrapper takes: on (the headers go
 * on the handler's response, the exchange watches its end), or `onRejected`'s response with the headers added, or
 * the policy's JSON answer.
 *
 * @example
 * return writeVerdict(await policy.handle(req, exchange, facts), exchange)
 */
export async function writeVerdict(
  verdict: HttpVerdict,
  exchange: Exchange,
  onRejected?: (decision: Decision) => Response | Promise<Response>,
): Promise<Step> {
  if (verdict.action !== 'reject') {
    const decision = verdict.action === 'pass' ? verdict.decision : undefined
    const headers = (verdict.action === 'pass' && verdict.headers) || []
    return {
      done: false,
      decision,
      finish: (response) => exchange.settle(withHeaders(response, headers)),
      fail: () => exchange.fail(),
    }
  }
  if (onRejected !== undefined && verdict.reason === 'rate-limited' && verdict.decision !== undefined) {
    return { done: true, response: withHeaders(await onRejected(verdict.decision), verdict.headers) }
  }
  const headers = new Headers(verdict.headers as [string, string][])
  headers.set('Content-Type', JSON_CONTENT_TYPE)
  const json = verdict.json ?? JSON.stringify(verdict.body)
  return { done: true, response: new Response(json, { status: verdict.status, headers }) }
}
