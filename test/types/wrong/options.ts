// Deliberately wrong options, one mistake per line, compiled by test/types/messages.test.ts to check that tsc's
// message names what is wrong. Not part of `npm run typecheck`.
import { createLimiter } from '@sluice/core'
import { rateLimit } from '@sluice/express'

createLimiter({ limit: 5 })
createLimiter({ algorithm: 'token-bucket', limit: 5 })
createLimiter({ algorithm: 'fixed-window', limit: 5, window: '1m', rate: 3 })
createLimiter({ limit: 5, window: '1m', rate: 3 })
createLimiter({ limit: 5, window: '1m', rules: [{ limit: 5, window: '1s' }] })
createLimiter({ period: 'day', limit: 5, window: '1s' })
createLimiter({ limit: 5, window: '1s', timeZone: 'UTC' })
rateLimit({ window: '1m' })
rateLimit({ limit: 5, window: '1m', rate: 3 })
