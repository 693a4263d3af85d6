export {
  type HeaderList,
  type HeaderMode,
  type HeadersOption,
  headerModes,
  headerWriter,
  rateLimitHeaders,
  retryAfterSeconds,
} from './headers'
export { ipKey } from './ip'
export type { RequestFacts } from './keys'
export type {
  HttpAdapter,
  HttpLimitOptions,
  HttpRuleOptions,
  KeyFunction,
  ResponseEvents,
} from './options'
export { createHttpPolicy, type HttpPolicy } from './policy'
export { type HttpVerdict, JSON_CONTENT_TYPE, type RejectionBody, type VerdictWriter, writeVerdict } from './verdict'
