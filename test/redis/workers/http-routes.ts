// What the limiter workers serve over HTTP: `GET /<algorithm>?key=...`, limited to HTTP_LIMIT per hour per key.
import type { AlgorithmName } from '@sluice/core'

export const HTTP_LIMIT = 50
export const HTTP_ALGORITHMS: readonly AlgorithmName[] = [
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
]
