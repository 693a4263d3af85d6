import type { Decision } from '@sluice/core'
import { type HttpVerdict, JSON_CONTENT_TYPE, writeVerdict as writeThrough } from '@sluice/core/internal'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** A custom answer to a rate-limited request (`onRejected`), written after the headers are set. */
export type FastifyRejected = (request: FastifyRequest, reply: FastifyReply, decision: Decision) => unknown

/**
 * Writes a verdict of any Sluice policy the Fastify way, in an `onRequest` hook: the decision on
 * `request.rateLimit`, the headers, then on, or `onRejected`, or the policy's JSON answer. The JSON is made: with its
 * type set, Fastify sends the text as it is instead of serializing an object. An admitted request goes on at once:
 * awaiting `undefined` would cost it a turn of the microtask queue.
 *
 * @example
 * await writeVerdict(await policy.handle(request, reply.raw, factsOf(request)), request, reply)
 */
export async function writeVerdict(
  verdict: HttpVerdict,
  request: FastifyRequest,
  reply: FastifyReply,
  onRejected?: FastifyRejected,
): Promise<void> {
  const written = writeThrough<unknown>(verdict, {
    next: () => undefined,
    decision: (decision) => {
      request.rateLimit = decision
    },
    header: (name, value) => reply.header(name, value),
    rejected: onRejected && ((decision) => onRejected(request, reply, decision)),
    send: (status, _body, json) => reply.code(status).header('content-type', JSON_CONTENT_TYPE).send(json),
  })
  if (written !== undefined) await written
}
