// @sluice/core/internal: what the adapters (@sluice/express, @sluice/koa, @sluice/fastify) share, so that none of
// them repeats the HTTP semantics. Not for applications: it changes with the adapters.

export {
  type AddressList,
  clientIpKey,
  compileAddressList,
  createConcurrencyPolicy,
  createHttpPolicy,
  createShedPolicy,
  type HeaderList,
  type HttpAdapter,
  type HttpConcurrencyPolicy,
  type HttpPolicy,
  type HttpShedPolicy,
  type HttpVerdict,
  headerModes,
  headerWriter,
  ipKey,
  JSON_CONTENT_TYPE,
  type LimitVerdict,
  NO_STORE,
  type RejectionBody,
  type RequestFacts,
  type RequestPolicy,
  type ResponseEvents,
  type ResponseLifecycle,
  rateLimitHandle,
  rateLimitHeaders,
  releaseAtEnd,
  retryAfterSeconds,
  type VerdictWriter,
  writeVerdict,
} from './http'
export { realTimers } from './protect'
export { describe as describeValue } from './util/errors'
