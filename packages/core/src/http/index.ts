export {
  createConcurrencyPolicy,
  type HttpConcurrencyOptions,
  type HttpConcurrencyPolicy,
} from './concurrency-policy'
export { type RateLimitHandle, rateLimitHandle } from './handle'
export {
  type HeaderList,
  type HeaderMode,
  type HeadersOption,
  headerModes,
  headerWriter,
  NO_STORE,
  rateLimitHeaders,
  retryAfterSeconds,
} from './headers'
export { clientIpKey, type IpKeyOptions, ipKey } from './ip'
export { type AddressList, compileAddressList } from './ip-list'
export type { RequestFacts } from './keys'
export type {
  HttpCommonOptions,
  HttpLimitOptions,
  HttpQuotaLimitOptions,
  HttpRateBucketLimitOptions,
  HttpRuleDefaults,
  HttpRuleOptions,
  HttpStackedBucketLimitOptions,
  HttpStackedLimitOptions,
  HttpWindowLimitOptions,
  KeyFunction,
  RuleKey,
} from './limit-options'
export type { AddressListOption } from './lists'
export { named } from './named'
export type { HttpAdapter } from './options'
export type { RequestLimit, RequestWindow } from './plans'
export { createHttpPolicy, type HttpPolicy } from './policy'
export { type ResponseEvents, type ResponseLifecycle, releaseAtEnd } from './response-end'
export { createShedPolicy, type HttpShedOptions, type HttpShedPolicy, type ShedEvent } from './shed-policy'
export {
  type HttpVerdict,
  JSON_CONTENT_TYPE,
  type LimitVerdict,
  PASS,
  type RejectionBody,
  type RejectionReason,
  type RequestPolicy,
  type VerdictWriter,
  writeVerdict,
} from './verdict'
