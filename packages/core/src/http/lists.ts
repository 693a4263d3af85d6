// Allow and deny lists: decided before keys, cost and the store. A denied request is answered 403; an allowed one
// skips the limiter (no count, no headers).
import { describe, InvalidOptionError } from '../util/errors'
import { compileAddressList } from './ip-list'

/**
 * An `allowList` or `denyList`: IP addresses and CIDR blocks (IPv4 and IPv6), matched against the framework's
 * proxy-aware client address; or a function of the request returning true for the requests on the list (or a
 * promise of it).
 *
 * @example
 * const office: AddressListOption<Request> = ['192.0.2.0/24', '2001:db8:1::/48']
 * const partners: AddressListOption<Request> = async (req) => isPartner(req.get('x-api-key'))
 */
export type AddressListOption<Req> = readonly string[] | ((req: Req) => boolean | Promise<boolean>)

/** Whether a request (with its client address) is on a list. */
export type AddressCheck<Req> = (req: Req, address: string | undefined) => boolean | Promise<boolean>

/**
 * Compiles an `allowList` or `denyList` option once: a bad entry throws an InvalidOptionError naming it
 * (`allowList[2]`); a function's answer is checked on each request (a TypeError unless it is true or false).
 *
 * @example
 * const denied = addressCheck<Request>(['203.0.113.0/24'], 'denyList')
 * denied?.(req, req.ip) // true for 203.0.113.9
 */
export function addressCheck<Req>(value: unknown, option: 'allowList' | 'denyList'): AddressCheck<Req> | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'function') {
    const onList = value as (req: Req) => unknown
    const checked = (answer: unknown): boolean => {
      if (typeof answer !== 'boolean') {
        throw new TypeError(`sluice: option "${option}" must return true or false (got ${describe(answer)})`)
      }
      return answer
    }
    return function isListed(req) {
      const answer = onList(req)
      return typeof answer === 'boolean' ? answer : Promise.resolve(answer).then(checked)
    }
  }
  if (!Array.isArray(value)) {
    throw new InvalidOptionError(
      option,
      `must be an array of IP addresses and CIDR blocks, or a function of the request (got ${describe(value)})`,
    )
  }
  const list = compileAddressList(value, option)
  return function isListed(_req, address) {
    return list.includes(address)
  }
}
