import { describe, InvalidOptionError } from '../util/errors'

// '+02:00', '-0530', 'UTC+2', 'GMT-03:00': a UTC offset, not a zone. (IANA's own fixed zones, 'Etc/GMT-2', pass.)
const UTC_OFFSET = /^(?:UTC|GMT)?\s*[+\-\u2212]\s*\d/i
// 'GMT+0' and 'GMT-0' look like offsets but are IANA names (links to 'Etc/GMT' in the tz database's `backward`
// file), as 'Etc/GMT+0' is: refusing them while accepting that one made no sense.
const IANA_ZERO_OFFSET = /^GMT[+-]0$/i

/**
 * Checks a `timeZone` option: any IANA time zone name the runtime's Intl knows (`'Europe/Berlin'`,
 * `'America/New_York'`, `'Asia/Kathmandu'`, `'UTC'`, the fixed `'Etc/GMT-2'`, the links `'GMT+0'` and `'GMT-0'`;
 * any letter case), `'UTC'` when
 * absent. A bare UTC offset such as `'+02:00'` is refused: Node 20's Intl refuses it while later engines accept it,
 * and a configuration should mean the same on every runtime; `'Etc/GMT-2'` is the IANA name of UTC+02:00.
 * Throws an {@link InvalidOptionError} naming `option`.
 *
 * @example
 * timeZoneOption(undefined, 'timeZone')              // 'UTC'
 * timeZoneOption('Europe/Berlin', 'rules[1].timeZone') // 'Europe/Berlin'
 * timeZoneOption('Mars/Olympus', 'rules[1].timeZone')  // throws: option "rules[1].timeZone" is not a time zone ...
 */
export function timeZoneOption(value: unknown, option: string): string {
  if (value === undefined) return 'UTC'
  if (typeof value !== 'string') {
    throw new InvalidOptionError(
      option,
      `must be an IANA time zone name such as 'Europe/Berlin' or 'UTC' (got ${describe(value)})`,
    )
  }
  if (UTC_OFFSET.test(value) && !IANA_ZERO_OFFSET.test(value)) {
    throw new InvalidOptionError(
      option,
      `must be an IANA time zone name, not a UTC offset (got ${describe(value)}): use the zone whose calendar ` +
        `the quota follows, such as 'Europe/Berlin' (it follows daylight saving time), or 'Etc/GMT-2' for a ` +
        `fixed UTC+02:00 (the Etc sign is inverted)`,
    )
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value })
  } catch {
    throw new InvalidOptionError(
      option,
      `is not a time zone this runtime knows (got ${describe(value)}): use an IANA name such as 'Europe/Berlin', ` +
        `'America/New_York' or 'UTC'`,
    )
  }
  return value
}
