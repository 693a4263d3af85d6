import type { Decision } from '@sluice/core'
import {
  type HttpVerdict,
  JSON_CONTENT_TYPE,
  type RequestPolicy,
  writeVerdict as writeThrough,
} from '@sluice/core/internal'
import type { NextFunction, Request, Response } from 'express'
import { factsOf } from './facts'

/** A custom answer to a rate-limited request (`onRejected`), written after the headers are set. */
export type ExpressRejected = (req: Request, res: Response, decision: Decision, next: NextFunction) => unknown

/**
 * Writes a verdict of any Sluice policy the Express way: the decision on `req.rateLimit`, the headers, then on, or
 * `onRejected`, or the policy's JSON answer. The JSON is made: res.json would stringify it again, and res.send would
 * hash it for an ETag that a no-store answer does not need. Node adds the Content-Length.
 *
 * @example
 * writeVerdict(await policy.handle(req, res, factsOf(req)), req, res, next)
 */
export function writeVerdict(
  verdict: HttpVerdict,
  req: Request,
  res: Response,
  next: NextFunction,
  onRejected?: ExpressRejected,
): unknown {
  return writeThrough<unknown>(verdict, {
    next,
    decision: (decision) => {
      req.rateLimit = decision
    },
    header: (name, value) => res.setHeader(name, value),
    rejected: onRejected && ((decision) => onRejected(req, res, decision, next)),
    send: (status, _body, json) => {
      res.statusCode = status
      res.setHeader('Content-Type', JSON_CONTENT_TYPE)
      res.end(json)
    },
  })
}

/**
 * Runs one request through a policy and writes its verdict. Express 4 does not catch a rejected promise, so every
 * error (a policy's, or a custom `onRejected`'s) goes to next() explicitly; a verdict given at once is written at
 * once, without a turn of the microtask queue.
 *
 * @example
 * const middleware = function shedLoad(req, res, next) { runPolicy(policy, req, res, next) }
 */
export function runPolicy(
  policy: RequestPolicy<Request, Response>,
  req: Request,
  res: Response,
  next: NextFunction,
  onRejected?: ExpressRejected,
): void {
  let verdict: HttpVerdict | Promise<HttpVerdict>
  try {
    verdict = policy.handle(req, res, factsOf(req))
  } catch (error) {
    next(error)
    return
  }
  if (verdict instanceof Promise) {
    verdict.then((settled) => writeVerdict(settled, req, res, next, onRejected)).catch(next)
    return
  }
  const written = writeVerdict(verdict, req, res, next, onRejected)
  if (written instanceof Promise) written.catch(next)
}
