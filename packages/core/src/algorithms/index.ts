import { calendarWindow, calendarWindowRefund } from './calendar-window'
import { fixedWindow, fixedWindowRefund } from './fixed-window'
import { leakyBucket, leakyBucketRefund } from './leaky-bucket'
import { leakyQueue, leakyQueueRefund } from './leaky-queue'
import { slidingLog, slidingLogRefund } from './sliding-log'
import { slidingWindow, slidingWindowRefund } from './sliding-window'
import { tokenBucket, tokenBucketRefund } from './token-bucket'
import type { Algorithm, AlgorithmName, Refund, StoreAlgorithmName } from './types'

export type { CalendarWindowState } from './calendar-window'
export type { FixedWindowState } from './fixed-window'
export type { LeakyBucketState } from './leaky-bucket'
export type { LeakyQueueState } from './leaky-queue'
export type { SlidingLogState } from './sliding-log'
export type { SlidingWindowState } from './sliding-window'
export type { TokenBucketState } from './token-bucket'
export {
  type Algorithm,
  type AlgorithmName,
  type AlgorithmParams,
  isBucket,
  type Refund,
  type Step,
  type StoreAlgorithmName,
} from './types'
export type { WindowCount } from './window-count'
export {
  calendarWindow,
  calendarWindowRefund,
  fixedWindow,
  fixedWindowRefund,
  leakyBucket,
  leakyBucketRefund,
  leakyQueue,
  leakyQueueRefund,
  slidingLog,
  slidingLogRefund,
  slidingWindow,
  slidingWindowRefund,
  tokenBucket,
  tokenBucketRefund,
}

/**
 * Every algorithm by the name a rule (or, for the queue, `schedule`) gives it.
 *
 * @example
 * const step = algorithms[rule.algorithm](state, Date.now(), 1, rule, true)
 */
export const algorithms: { readonly [name in StoreAlgorithmName]: Algorithm<unknown> } = {
  'fixed-window': fixedWindow as Algorithm<unknown>,
  'sliding-log': slidingLog as Algorithm<unknown>,
  'sliding-window': slidingWindow as Algorithm<unknown>,
  'token-bucket': tokenBucket as Algorithm<unknown>,
  'leaky-bucket': leakyBucket as Algorithm<unknown>,
  'leaky-queue': leakyQueue as Algorithm<unknown>,
  'calendar-window': calendarWindow as Algorithm<unknown>,
}

/**
 * The names accepted by the `algorithm` option.
 *
 * @example
 * if (!ALGORITHM_NAMES.includes(name)) throw new Error(`unknown algorithm ${name}`)
 */
export const ALGORITHM_NAMES: readonly AlgorithmName[] = [
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
]

/**
 * Every algorithm's refund, by the same names.
 *
 * @example
 * const step = refunds[rule.algorithm](state, Date.now(), 1, rule)
 */
export const refunds: { readonly [name in StoreAlgorithmName]: Refund<unknown> } = {
  'fixed-window': fixedWindowRefund as Refund<unknown>,
  'sliding-log': slidingLogRefund as Refund<unknown>,
  'sliding-window': slidingWindowRefund as Refund<unknown>,
  'token-bucket': tokenBucketRefund as Refund<unknown>,
  'leaky-bucket': leakyBucketRefund as Refund<unknown>,
  'leaky-queue': leakyQueueRefund as Refund<unknown>,
  'calendar-window': calendarWindowRefund as Refund<unknown>,
}
