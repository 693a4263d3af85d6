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
  type VerdictWriter,
  writeVerdict,
} from './policy'
