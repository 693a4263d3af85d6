import { serverNow } from './http-date'
import { isInnerList, type ListMember, parseDictionary, parseItem, parseList, Token } from './structured-fields'

/** One quota the server reported. Fields the server did not send (or sent malformed) are absent. */
export interface RateLimitQuota {
  /** The policy's name: the item's identifier in the IETF fields; absent in the older forms. */
  name?: string
  /** The quota: how many units the window allows. */
  limit?: number
  /** How many units are left. */
  remaining?: number
  /** How long until the quota is restored, in ms from when the response was sent. */
  resetMs?: number
  /** The window the quota applies to, in ms. */
  windowMs?: number
  /** What the quota counts, when the server says (IETF `qu`: `"requests"`, `"content-bytes"`, ...). */
  quotaUnit?: string
}

/** Which header family the information came from. */
export type RateLimitFormat = 'ietf' | 'draft-7' | 'draft-6' | 'legacy'

/**
 * The rate-limit state a server reported. The top-level fields are those of the quota that binds (the one with
 * the fewest remaining; on a tie the one that resets last); every quota is in `quotas`.
 */
export interface RateLimitInfo extends RateLimitQuota {
  format: RateLimitFormat
  quotas: RateLimitQuota[]
}

/** Response headers: a fetch `Headers` or a Node-style record (`res.headers` of `node:http`). */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | number | undefined>>

/** Options of {@link parseRateLimitHeaders}. */
export interface ParseRateLimitOptions {
  /**
   * The time in ms, to turn an `X-RateLimit-Reset` given as a Unix time into a wait. The response's `Date` header
   * is used instead when present, so that clock skew between client and server does not shift the reset.
   * Default `Date.now()`.
   */
  now?: () => number
}

/**
 * Reads the rate-limit header fields of a response into one typed object, or `undefined` when it has none. It
 * understands, in this order of preference:
 * - `'ietf'`: `RateLimit: "user";r=42;t=18` with `RateLimit-Policy: "user";q=100;w=60`
 *   (draft-ietf-httpapi-ratelimit-headers -08 to -11), one item per policy, possibly several;
 * - `'draft-7'`: `RateLimit: limit=100, remaining=42, reset=18` with `RateLimit-Policy: 100;w=60`;
 * - `'draft-6'`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-Policy`;
 * - `'legacy'`: `X-RateLimit-Limit`, `-Remaining`, `-Reset`. The reset is read as a Unix time in seconds when
 *   it is above 1e9 (as GitHub sends it; above 1e12, in ms) and as seconds from now otherwise (as many others do):
 *   1e9 seconds is 31 years, longer than any window, and 1e9 as a Unix time is in 2001, before any response.
 *
 * A malformed field is ignored, as the IETF draft requires, and so is a malformed item within a valid field.
 *
 * @example
 * const res = await fetch('https://api.example.com/things')
 * const info = parseRateLimitHeaders(res.headers)
 * if (info?.remaining === 0) console.log(`quota ${info.name ?? ''} resets in ${info.resetMs} ms`)
 */
export function parseRateLimitHeaders(
  headers: HeaderSource,
  options: ParseRateLimitOptions = {},
): RateLimitInfo | undefined {
  const fields = toHeaders(headers)
  const nowMs = (options.now ?? Date.now)()
  const found = ietf(fields) ?? draft7(fields) ?? draft6(fields) ?? legacy(fields, serverNow(fields, nowMs))
  if (found === undefined || found.quotas.length === 0) return undefined
  return { ...binding(found.quotas), format: found.format, quotas: found.quotas }
}

interface Found {
  format: RateLimitFormat
  quotas: RateLimitQuota[]
}

/**
 * The longest field read, in characters. A RateLimit field of 8 KiB holds some 200 policies; anything longer is
 * not a rate-limit report but an attack on the parser, and is ignored without being read.
 */
const MAX_FIELD_LENGTH = 8192

/** A field's value, or `null` when it is absent or too long to be a rate-limit report. */
function field(fields: Headers, name: string): string | null {
  const value = fields.get(name)
  return value !== null && value.length <= MAX_FIELD_LENGTH ? value : null
}

function ietf(fields: Headers): Found | undefined {
  const byName = new Map<string, RateLimitQuota>()
  const quotaFor = (name: string) => {
    let quota = byName.get(name)
    if (quota === undefined) {
      quota = { name }
      byName.set(name, quota)
    }
    return quota
  }
  for (const member of list(field(fields, 'ratelimit-policy'))) {
    const name = identifier(member)
    const limit = member.params.get('q')
    // The draft makes q required: an item without a valid one is malformed and ignored.
    if (name === undefined || !isCount(limit)) continue
    const quota = quotaFor(name)
    quota.limit = limit
    const window = member.params.get('w')
    if (isCount(window)) quota.windowMs = window * 1000
    const unit = member.params.get('qu')
    if (typeof unit === 'string') quota.quotaUnit = unit
  }
  for (const member of list(field(fields, 'ratelimit'))) {
    const name = identifier(member)
    const remaining = member.params.get('r')
    if (name === undefined || !isCount(remaining)) continue
    const quota = quotaFor(name)
    quota.remaining = remaining
    const reset = member.params.get('t')
    if (isCount(reset)) quota.resetMs = reset * 1000
  }
  return byName.size > 0 ? { format: 'ietf', quotas: [...byName.values()] } : undefined
}

function draft7(fields: Headers): Found | undefined {
  const value = field(fields, 'ratelimit')
  if (value === null) return undefined
  let dictionary: ReturnType<typeof parseDictionary>
  try {
    dictionary = parseDictionary(value)
  } catch {
    return undefined
  }
  const quota: RateLimitQuota = {}
  const limit = dictionary.get('limit')
  const remaining = dictionary.get('remaining')
  const reset = dictionary.get('reset')
  if (limit && !isInnerList(limit) && isCount(limit.value)) quota.limit = limit.value
  if (remaining && !isInnerList(remaining) && isCount(remaining.value)) quota.remaining = remaining.value
  if (reset && !isInnerList(reset) && isCount(reset.value)) quota.resetMs = reset.value * 1000
  if (quota.limit === undefined && quota.remaining === undefined && quota.resetMs === undefined) return undefined
  addWindow(quota, fields)
  return { format: 'draft-7', quotas: [quota] }
}

function draft6(fields: Headers): Found | undefined {
  const quota: RateLimitQuota = {}
  // Early drafts allowed `RateLimit-Limit: 10, 10;w=1, 50;w=60`: the first member is the limit that binds.
  const [first] = list(field(fields, 'ratelimit-limit'))
  if (first && isCount(first.value)) quota.limit = first.value
  const remaining = integerItem(field(fields, 'ratelimit-remaining'))
  if (remaining !== undefined) quota.remaining = remaining
  const reset = integerItem(field(fields, 'ratelimit-reset'))
  if (reset !== undefined) quota.resetMs = reset * 1000
  if (quota.limit === undefined && quota.remaining === undefined && quota.resetMs === undefined) return undefined
  addWindow(quota, fields)
  return { format: 'draft-6', quotas: [quota] }
}

function legacy(fields: Headers, serverNowMs: number): Found | undefined {
  const quota: RateLimitQuota = {}
  const limit = plainNumber(field(fields, 'x-ratelimit-limit'))
  if (limit !== undefined && Number.isInteger(limit)) quota.limit = limit
  const remaining = plainNumber(field(fields, 'x-ratelimit-remaining'))
  if (remaining !== undefined && Number.isInteger(remaining)) quota.remaining = remaining
  const reset = plainNumber(field(fields, 'x-ratelimit-reset'))
  if (reset !== undefined) quota.resetMs = resetToMs(reset, serverNowMs)
  if (quota.limit === undefined && quota.remaining === undefined && quota.resetMs === undefined) return undefined
  return { format: 'legacy', quotas: [quota] }
}

/** An X-RateLimit-Reset value as ms from now: a Unix time in ms or seconds, or a number of seconds from now. */
function resetToMs(reset: number, serverNowMs: number): number {
  if (reset > 1e12) return Math.max(0, Math.ceil(reset - serverNowMs))
  if (reset > 1e9) return Math.max(0, Math.ceil(reset * 1000 - serverNowMs))
  return Math.ceil(reset * 1000)
}

/** Adds the window of a draft-6/draft-7 `RateLimit-Policy` whose quota matches the limit (`100;w=60`). */
function addWindow(quota: RateLimitQuota, fields: Headers): void {
  const policies = list(field(fields, 'ratelimit-policy')).filter((member) => isCount(member.value))
  const match =
    policies.find((member) => member.value === quota.limit) ?? (quota.limit === undefined ? policies[0] : undefined)
  if (match === undefined) return
  if (quota.limit === undefined && isCount(match.value)) quota.limit = match.value
  const window = match.params.get('w')
  if (isCount(window)) quota.windowMs = window * 1000
}

/** The quota that binds: the fewest remaining, then the longest reset. */
function binding(quotas: RateLimitQuota[]): RateLimitQuota {
  let best = quotas[0]!
  for (const quota of quotas.slice(1)) {
    const a = quota.remaining ?? Number.POSITIVE_INFINITY
    const b = best.remaining ?? Number.POSITIVE_INFINITY
    if (a < b || (a === b && (quota.resetMs ?? 0) > (best.resetMs ?? 0))) best = quota
  }
  return best
}

/** The Items of a List field; an absent or malformed field is empty, and Inner Lists are not quotas. */
function list(value: string | null) {
  if (value === null) return []
  try {
    return parseList(value).filter((member): member is Exclude<ListMember, { items: unknown }> => !isInnerList(member))
  } catch {
    return []
  }
}

function integerItem(value: string | null): number | undefined {
  if (value === null) return undefined
  try {
    const item = parseItem(value)
    return isCount(item.value) ? item.value : undefined
  } catch {
    return undefined
  }
}

/** The policy identifier of an IETF item: a String (-09 on) or a Token (-08). */
function identifier(member: { value: unknown }): string | undefined {
  if (typeof member.value === 'string') return member.value
  if (member.value instanceof Token) return member.value.value
  return undefined
}

/** A non-negative Integer, the only value the drafts allow for quotas, counts and seconds. */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0
}

/**
 * X-RateLimit-* are not structured fields: a plain non-negative number, possibly with a fraction (Discord). At
 * most 15 digits before the point, as for a structured-field Integer: a longer one is not a count or a time, and
 * 309 digits would read as Infinity.
 */
function plainNumber(value: string | null): number | undefined {
  const text = value?.trim()
  if (text === undefined || !/^\d{1,15}(\.\d{1,15})?$/.test(text)) return undefined
  return Number(text)
}

/** Combines repeated fields with ", " as RFC 9110 s5.3 allows, so a List split over two lines parses whole. */
function toHeaders(source: HeaderSource): Headers {
  if (source instanceof Headers) return source
  const headers = new Headers()
  // A Headers object of another fetch implementation (node-fetch, a test double) is copied through its forEach.
  if (isHeadersLike(source)) {
    source.forEach((value, name) => {
      headers.append(name, value)
    })
    return headers
  }
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue
    if (typeof value === 'string' || typeof value === 'number') headers.append(name, String(value))
    else for (const v of value) headers.append(name, v)
  }
  return headers
}

function isHeadersLike(source: object): source is Pick<Headers, 'forEach'> {
  return (
    typeof (source as { get?: unknown }).get === 'function' &&
    typeof (source as { forEach?: unknown }).forEach === 'function'
  )
}
