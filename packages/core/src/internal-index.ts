// @sluice/core/internal: what the adapters (@sluice/express, @sluice/koa, @sluice/fastify, @sluice/fetch) share, so
// that none of them repeats the HTTP semantics: the three policies, one verdict, one writer. Not for applications.
// docs/adapters.md documents this list, and says when it changes.

export {
  clientIpKey,
  createConcurrencyPolicy,
  createHttpPolicy,
  createShedPolicy,
  type HttpAdapter,
  type HttpPolicy,
  type HttpVerdict,
  ipKey,
  JSON_CONTENT_TYPE,
  named,
  type RequestFacts,
  type RequestPolicy,
  type ResponseEvents,
  type ResponseLifecycle,
  rateLimitHandle,
  type VerdictWriter,
  writeVerdict,
} from './http'
export { describe as describeValue } from './util/errors'
