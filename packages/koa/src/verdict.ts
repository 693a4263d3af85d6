import type { ServerResponse } from 'node:http'
import type { Decision } from '@sluice/core'
import {
  type HttpVerdict,
  JSON_CONTENT_TYPE,
  type RequestPolicy,
  writeVerdict as writeThrough,
} from '@sluice/core/internal'
import type { Context, Next } from 'koa'
import { factsOf } from './facts'

/** A custom answer to a rate-limited request (`onRejected`), written after the headers are set. */
export type KoaRejected = (ctx: Context, decision: Decision) => void | Promise<void>

/**
 * Writes a verdict of any Sluice policy the Koa way: the decision on `ctx.state.rateLimit`, the headers, then on, or
 * `onRejected`, or the policy's JSON answer, its type set first so that Koa neither stringifies it nor looks a type
 * up.
 *
 * @example
 * return writeVerdict(await policy.handle(ctx, ctx.res, factsOf(ctx)), ctx, next)
 */
export function writeVerdict(
  verdict: HttpVerdict,
  ctx: Context,
  next: Next,
  onRejected?: KoaRejected,
): Promise<void> | void {
  return writeThrough<Promise<void> | void>(verdict, {
    next,
    decision: (decision) => {
      ctx.state.rateLimit = decision
    },
    // What ctx.set does, without its arguments object (a third of a microsecond per header on a busy server).
    header: (name, value) => {
      if (!ctx.res.headersSent) ctx.res.setHeader(name, value)
    },
    rejected: onRejected && ((decision) => onRejected(ctx, decision)),
    send: (status, _body, json) => {
      ctx.status = status
      ctx.res.setHeader('Content-Type', JSON_CONTENT_TYPE)
      ctx.body = json
    },
  })
}

/** What the middleware returns once a verdict given at once is written: Koa awaits it, and a caller may too. */
const WRITTEN: Promise<void> = Promise.resolve()

/**
 * Runs one request through a policy (on the Node response, `ctx.res`) and writes its verdict: a verdict given at
 * once is written at once, without a turn of the microtask queue. As an async function would, it returns a promise
 * and rejects with what the policy, a key function or `onRejected` throws.
 *
 * @example
 * const middleware = function shedLoad(ctx, next) { return runPolicy(policy, ctx, next) }
 */
export function runPolicy(
  policy: RequestPolicy<Context, ServerResponse>,
  ctx: Context,
  next: Next,
  onRejected?: KoaRejected,
): Promise<void> {
  try {
    const verdict = policy.handle(ctx, ctx.res, factsOf(ctx))
    if (verdict instanceof Promise) return verdict.then((settled) => writeVerdict(settled, ctx, next, onRejected))
    const written = writeVerdict(verdict, ctx, next, onRejected)
    return written === undefined ? WRITTEN : Promise.resolve(written)
  } catch (error) {
    return Promise.reject(error)
  }
}
