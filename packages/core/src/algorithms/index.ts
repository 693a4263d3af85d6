import { fixedWindow } from './fixed-window'
import { leakyBucket } from './leaky-bucket'
import { leakyQueue } from './leaky-queue'
import { slidingLog } from './sliding-log'
import { slidingWindow } from './sliding-window'
import { tokenBucket } from './token-bucket'
import type { Algorithm, AlgorithmName, StoreAlgorithmName } from './types'

export type { FixedWindowState } from './fixed-window'
export type { LeakyBucketState } from './leaky-bucket'
export type { LeakyQueueState } from './leaky-queue'
export type { SlidingLogState } from './sliding-log'
export type { SlidingWindowState } from './sliding-window'
export type { TokenBucketState } from './token-bucket'
export type { Algorithm, AlgorithmName, AlgorithmParams, Step, StoreAlgorithmName } from './types'
export { fixedWindow, leakyBucket, leakyQueue, slidingLog, slidingWindow, tokenBucket }

/** Every algorithm by the name a rule (or, for the queue, `schedule`) gives it. */
export const algorithms: { readonly [name in StoreAlgorithmName]: Algorithm<unknown> } = {
  'fixed-window': fixedWindow as Algorithm<unknown>,
  'sliding-log': slidingLog as Algorithm<unknown>,
  'sliding-window': slidingWindow as Algorithm<unknown>,
  'token-bucket': tokenBucket as Algorithm<unknown>,
  'leaky-bucket': leakyBucket as Algorithm<unknown>,
  'leaky-queue': leakyQueue as Algorithm<unknown>,
}

/** The names accepted by the `algorithm` option. */
export const ALGORITHM_NAMES: readonly AlgorithmName[] = [
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
]
