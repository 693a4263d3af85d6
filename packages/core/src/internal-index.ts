// @sluice/core/internal: what the adapters (@sluice/express, @sluice/koa, @sluice/fastify) share, so that none of
// them repeats the HTTP semantics. Not for applications: it changes with the adapters.

export {
  type AddressList,
  clientIpKey,
  compileAddressList,
  createHttpPolicy,
  type HeaderList,
  type HttpAdapter,
  type HttpPolicy,
  type HttpVerdict,
  headerModes,
  headerWriter,
  ipKey,
  JSON_CONTENT_TYPE,
  NO_STORE,
  type RejectionBody,
  type RequestFacts,
  type ResponseEvents,
  rateLimitHandle,
  rateLimitHeaders,
  retryAfterSeconds,
  type VerdictWriter,
  writeVerdict,
} from './http'
export {
  createConcurrencyPolicy,
  createShedPolicy,
  type HttpConcurrencyPolicy,
  type HttpShedPolicy,
  type ProtectVerdict,
  type ResponseLifecycle,
  realTimers,
  releaseAtEnd,
} from './protect'
export { describe as describeValue } from './util/errors'
