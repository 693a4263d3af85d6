import { type Cursor, isAlpha, isDigit } from './cursor'
import { type BareItem, Token } from './types'

// RFC 9110 s5.6.2 tchar, plus ':' and '/' which RFC 9651 s4.2.6 allows inside a Token.
const TOKEN_CHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z:/]$/
// One character class, repeated: a single pass over the text, with nothing to backtrack into.
const BASE64 = /^[A-Za-z0-9+/=]*$/

/** Parses a Bare Item (RFC 9651 s4.2.3.1): its first character says which type it is. */
export function bareItem(cursor: Cursor): BareItem {
  const c = cursor.peek()
  if (c === '-' || isDigit(c)) return number(cursor)
  if (c === '"') return string(cursor)
  if (c === '*' || isAlpha(c)) return token(cursor)
  if (c === ':') return byteSequence(cursor)
  if (c === '?') return boolean(cursor)
  if (c === '@') return date(cursor)
  if (c === '%') return displayString(cursor)
  return cursor.fail('expected a value')
}

/** RFC 9651 s4.2.4: at most 15 integer digits; a Decimal has at most 12 before and 3 after the point. */
function number(cursor: Cursor): number {
  let sign = 1
  if (cursor.peek() === '-') {
    sign = -1
    cursor.pos++
  }
  if (!isDigit(cursor.peek())) cursor.fail('expected a digit')
  const start = cursor.pos
  let decimal = false
  while (!cursor.atEnd()) {
    const c = cursor.peek()
    if (isDigit(c)) {
      cursor.pos++
    } else if (c === '.' && !decimal) {
      if (cursor.pos - start > 12) cursor.fail('too many digits before the decimal point')
      decimal = true
      cursor.pos++
    } else {
      break
    }
    const length = cursor.pos - start
    if (!decimal && length > 15) cursor.fail('integer too long')
    if (decimal && length > 16) cursor.fail('decimal too long')
  }
  const digits = cursor.input.slice(start, cursor.pos)
  if (decimal) {
    if (digits.endsWith('.')) cursor.fail('a decimal cannot end with "."')
    if (digits.length - digits.indexOf('.') - 1 > 3) cursor.fail('more than 3 fractional digits')
  }
  return sign * Number(digits)
}

function string(cursor: Cursor): string {
  cursor.expect('"')
  let value = ''
  while (!cursor.atEnd()) {
    const c = cursor.input[cursor.pos++]!
    if (c === '\\') {
      const escaped = cursor.input[cursor.pos++]
      if (escaped !== '"' && escaped !== '\\') cursor.fail('only \\" and \\\\ may be escaped in a string')
      value += escaped
    } else if (c === '"') {
      return value
    } else if (c < ' ' || c > '~') {
      cursor.fail('strings hold printable ASCII only')
    } else {
      value += c
    }
  }
  return cursor.fail('unterminated string')
}

function token(cursor: Cursor): Token {
  const start = cursor.pos
  cursor.pos++
  while (!cursor.atEnd() && TOKEN_CHAR.test(cursor.peek()!)) cursor.pos++
  return new Token(cursor.input.slice(start, cursor.pos))
}

function byteSequence(cursor: Cursor): Uint8Array {
  cursor.expect(':')
  const end = cursor.input.indexOf(':', cursor.pos)
  if (end === -1) cursor.fail('unterminated byte sequence')
  const encoded = cursor.input.slice(cursor.pos, end)
  if (!BASE64.test(encoded)) cursor.fail('invalid base64 in a byte sequence')
  cursor.pos = end + 1
  let binary: string
  try {
    binary = atob(encoded)
  } catch {
    return cursor.fail('invalid base64 in a byte sequence')
  }
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

function boolean(cursor: Cursor): boolean {
  cursor.expect('?')
  const c = cursor.input[cursor.pos++]
  if (c === '1') return true
  if (c === '0') return false
  return cursor.fail('a boolean is ?0 or ?1')
}

function date(cursor: Cursor): Date {
  cursor.expect('@')
  const start = cursor.pos
  const seconds = number(cursor)
  if (cursor.input.slice(start, cursor.pos).includes('.')) cursor.fail('a date is an integer')
  return new Date(seconds * 1000)
}

/** RFC 9651 s4.2.10: percent-encoded UTF-8 with lowercase hex digits. */
function displayString(cursor: Cursor): string {
  cursor.expect('%')
  cursor.expect('"')
  const bytes: number[] = []
  while (!cursor.atEnd()) {
    const c = cursor.input[cursor.pos++]!
    if (c < ' ' || c > '~') cursor.fail('display strings hold printable ASCII only')
    if (c === '%') {
      const hex = cursor.input.slice(cursor.pos, cursor.pos + 2)
      if (!/^[0-9a-f]{2}$/.test(hex)) cursor.fail('invalid percent-encoding in a display string')
      bytes.push(Number.parseInt(hex, 16))
      cursor.pos += 2
    } else if (c === '"') {
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes))
      } catch {
        return cursor.fail('invalid UTF-8 in a display string')
      }
    } else {
      bytes.push(c.charCodeAt(0))
    }
  }
  return cursor.fail('unterminated display string')
}
