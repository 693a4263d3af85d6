// The code of docs/choosing.md: each region is a block of the doc, word for word (test/docs/code-blocks.test.ts),
// and `npm run typecheck` compiles this file, so the doc's code always builds.
import { createLimiter, RateLimitError } from '@sluice/core'

declare function sendSms(to: string, text: string): Promise<void>

// #region queue
const sms = createLimiter({ algorithm: 'leaky-bucket', limit: 20, window: '10s' }) // 2 a second, 20 waiting at most

export async function notify(to: string, text: string): Promise<boolean> {
  try {
    await sms.schedule('provider') // resolves when this message may go: never faster than 2 a second
  } catch (error) {
    if (error instanceof RateLimitError) return false // 20 already wait (10 s of backlog): drop it now
    throw error
  }
  await sendSms(to, text)
  return true
}
// #endregion queue
