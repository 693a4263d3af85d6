// The response fields of express-rate-limit 8, written as it writes them, field for field, so that a client
// reading them sees no change. They do not go through Sluice's header modes: those follow later drafts.
import { createHash } from 'node:crypto'
import type { Response } from 'express'
import type { DraftHeadersVersion, RateLimitInfo } from './types'

/** Whole seconds until `resetTime` (never negative), or the whole window when the store gave no reset time. */
export function resetSeconds(windowMs: number, resetTime: Date | undefined, now: number): number {
  if (resetTime === undefined) return Math.ceil(windowMs / 1000)
  return Math.max(0, Math.ceil((resetTime.getTime() - now) / 1000))
}

/**
 * The `pk` of draft-8: the first 12 hex digits of the key's SHA-256, as a byte sequence (base64 of those 12 ASCII
 * characters), so that the field identifies the partition without disclosing the key (an IP address).
 */
export function partitionKey(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex').slice(0, 12)
  return Buffer.from(hex).toString('base64')
}

/** `X-RateLimit-*`, with `X-RateLimit-Reset` as a Unix time in seconds and a `Date` to read it against. */
export function setLegacyHeaders(res: Response, info: RateLimitInfo, now: number): void {
  if (res.headersSent) return
  res.setHeader('X-RateLimit-Limit', String(info.limit))
  res.setHeader('X-RateLimit-Remaining', String(info.remaining))
  if (info.resetTime instanceof Date) {
    res.setHeader('Date', new Date(now).toUTCString())
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(info.resetTime.getTime() / 1000)))
  }
}

/** The fields of `standardHeaders`: draft-6 (four headers), draft-7 (one list) or draft-8 (named items, appended). */
export function setStandardHeaders(
  res: Response,
  version: DraftHeadersVersion,
  info: RateLimitInfo,
  windowMs: number,
  name: string,
  now: number,
): void {
  if (res.headersSent) return
  const windowSeconds = Math.ceil(windowMs / 1000)
  const reset = resetSeconds(windowMs, info.resetTime, now)
  if (version === 'draft-8') {
    // Appended, so that two limiters on one route each list their policy.
    res.append('RateLimit', `"${name}"; r=${info.remaining}; t=${reset}`)
    res.append('RateLimit-Policy', `"${name}"; q=${info.limit}; w=${windowSeconds}; pk=:${partitionKey(info.key)}:`)
    return
  }
  res.setHeader('RateLimit-Policy', `${info.limit};w=${windowSeconds}`)
  if (version === 'draft-7') {
    res.setHeader('RateLimit', `limit=${info.limit}, remaining=${info.remaining}, reset=${reset}`)
    return
  }
  res.setHeader('RateLimit-Limit', String(info.limit))
  res.setHeader('RateLimit-Remaining', String(info.remaining))
  res.setHeader('RateLimit-Reset', String(reset))
}

/** `Retry-After` in whole seconds. */
export function setRetryAfter(res: Response, seconds: number): void {
  if (res.headersSent) return
  res.setHeader('Retry-After', String(seconds))
}
