export {
  type HeaderList,
  type HeaderMode,
  type HeadersOption,
  headerModes,
  rateLimitHeaders,
  retryAfterSeconds,
} from './headers'
export { ipKey } from './ip'
export {
  COST_EXCEEDS_CAPACITY_STATUS,
  createHttpPolicy,
  type HttpLimitOptions,
  type HttpPolicy,
  type HttpRuleOptions,
  type HttpVerdict,
  type KeyFunction,
  type Logger,
  type RejectionBody,
  type RequestFacts,
  type ResponseEvents,
  STORE_UNAVAILABLE_STATUS,
} from './policy'
