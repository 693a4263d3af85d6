/**
 * A small parser for HTTP Structured Field Values (RFC 9651), enough to read the RateLimit header fields without
 * a runtime dependency. It follows the parsing algorithms of RFC 9651 section 4.2 step by step and, as they
 * require, rejects the whole field on any syntax error: the caller then ignores the field.
 */

/** A Token (RFC 9651 s3.3.4), kept apart from a String because the two are different types on the wire. */
export class Token {
  constructor(readonly value: string) {}
}

/** A bare value: Integer or Decimal (number), String or Display String (string), Token, Byte Sequence, Boolean, Date. */
export type BareItem = number | string | boolean | Token | Uint8Array | Date

/** Parameters of an Item or Inner List, in order; a repeated key keeps its last value (RFC 9651 s4.2.3.2). */
export type Parameters = ReadonlyMap<string, BareItem>

// Most items have no parameters: they share one empty map rather than each allocating its own, which in a field
// of thousands of bare items was most of the parse time (the garbage collector's).
const NO_PARAMETERS: Parameters = new Map()

/** An Item with its Parameters. */
export interface Item {
  value: BareItem
  params: Parameters
}

/** An Inner List: Items in parentheses, with Parameters of its own. */
export interface InnerList {
  items: Item[]
  params: Parameters
}

export type ListMember = Item | InnerList
export type Dictionary = Map<string, ListMember>

/** Thrown on a syntax error; callers of the field parsers treat it as "ignore this field". */
export class StructuredFieldError extends Error {
  override readonly name = 'StructuredFieldError'
}

/** Whether a List or Dictionary member is an Inner List rather than an Item. */
export function isInnerList(member: ListMember): member is InnerList {
  return 'items' in member
}

/** Parses a List field (RFC 9651 s4.2.1). Throws {@link StructuredFieldError} when malformed. */
export function parseList(field: string): ListMember[] {
  const parser = new Parser(field)
  const list = parser.list()
  parser.end()
  return list
}

/** Parses a Dictionary field (RFC 9651 s4.2.2). Throws {@link StructuredFieldError} when malformed. */
export function parseDictionary(field: string): Dictionary {
  const parser = new Parser(field)
  const dictionary = parser.dictionary()
  parser.end()
  return dictionary
}

/** Parses an Item field (RFC 9651 s4.2.3). Throws {@link StructuredFieldError} when malformed. */
export function parseItem(field: string): Item {
  const parser = new Parser(field)
  const item = parser.item()
  parser.end()
  return item
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'
const isLcAlpha = (c: string | undefined) => c !== undefined && c >= 'a' && c <= 'z'
const isAlpha = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
// RFC 9110 s5.6.2 tchar, plus ':' and '/' which RFC 9651 s4.2.6 allows inside a Token.
const TOKEN_CHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z:/]$/
// One character class, repeated: a single pass over the text, with nothing to backtrack into.
const BASE64 = /^[A-Za-z0-9+/=]*$/

class Parser {
  private pos = 0
  private readonly input: string

  constructor(field: string) {
    // RFC 9651 s4.2: leading and trailing spaces are discarded before parsing. Scanned by hand: the regular
    // expression / +$/ retries from every space of a run, quadratic in its length on a hostile header.
    let start = 0
    let end = field.length
    while (start < end && field[start] === ' ') start++
    while (end > start && field[end - 1] === ' ') end--
    this.input = field.slice(start, end)
  }

  end(): void {
    if (this.pos !== this.input.length) this.fail('unexpected characters after the value')
  }

  list(): ListMember[] {
    const members: ListMember[] = []
    while (!this.atEnd()) {
      members.push(this.itemOrInnerList())
      this.skipOws()
      if (this.atEnd()) return members
      this.expect(',')
      this.skipOws()
      if (this.atEnd()) this.fail('trailing comma')
    }
    return members
  }

  dictionary(): Dictionary {
    const dictionary: Dictionary = new Map()
    while (!this.atEnd()) {
      const key = this.key()
      if (this.peek() === '=') {
        this.pos++
        dictionary.set(key, this.itemOrInnerList())
      } else {
        dictionary.set(key, { value: true, params: this.parameters() })
      }
      this.skipOws()
      if (this.atEnd()) return dictionary
      this.expect(',')
      this.skipOws()
      if (this.atEnd()) this.fail('trailing comma')
    }
    return dictionary
  }

  item(): Item {
    const value = this.bareItem()
    return { value, params: this.parameters() }
  }

  private itemOrInnerList(): ListMember {
    return this.peek() === '(' ? this.innerList() : this.item()
  }

  private innerList(): InnerList {
    this.expect('(')
    const items: Item[] = []
    while (!this.atEnd()) {
      while (this.peek() === ' ') this.pos++
      if (this.peek() === ')') {
        this.pos++
        return { items, params: this.parameters() }
      }
      items.push(this.item())
      const next = this.peek()
      if (next !== ' ' && next !== ')') this.fail('expected a space or ")" in an inner list')
    }
    return this.fail('unterminated inner list')
  }

  private parameters(): Parameters {
    if (this.peek() !== ';') return NO_PARAMETERS
    const params = new Map<string, BareItem>()
    while (this.peek() === ';') {
      this.pos++
      while (this.peek() === ' ') this.pos++
      const key = this.key()
      let value: BareItem = true
      if (this.peek() === '=') {
        this.pos++
        value = this.bareItem()
      }
      params.set(key, value)
    }
    return params
  }

  private key(): string {
    const first = this.peek()
    if (!isLcAlpha(first) && first !== '*') this.fail('a key must start with a lowercase letter or "*"')
    const start = this.pos
    while (!this.atEnd()) {
      const c = this.peek()
      if (!(isLcAlpha(c) || isDigit(c) || c === '_' || c === '-' || c === '.' || c === '*')) break
      this.pos++
    }
    return this.input.slice(start, this.pos)
  }

  private bareItem(): BareItem {
    const c = this.peek()
    if (c === '-' || isDigit(c)) return this.number()
    if (c === '"') return this.string()
    if (c === '*' || isAlpha(c)) return this.token()
    if (c === ':') return this.byteSequence()
    if (c === '?') return this.boolean()
    if (c === '@') return this.date()
    if (c === '%') return this.displayString()
    return this.fail('expected a value')
  }

  /** RFC 9651 s4.2.4: at most 15 integer digits; a Decimal has at most 12 before and 3 after the point. */
  private number(): number {
    let sign = 1
    if (this.peek() === '-') {
      sign = -1
      this.pos++
    }
    if (!isDigit(this.peek())) this.fail('expected a digit')
    const start = this.pos
    let decimal = false
    while (!this.atEnd()) {
      const c = this.peek()
      if (isDigit(c)) {
        this.pos++
      } else if (c === '.' && !decimal) {
        if (this.pos - start > 12) this.fail('too many digits before the decimal point')
        decimal = true
        this.pos++
      } else {
        break
      }
      const length = this.pos - start
      if (!decimal && length > 15) this.fail('integer too long')
      if (decimal && length > 16) this.fail('decimal too long')
    }
    const digits = this.input.slice(start, this.pos)
    if (decimal) {
      if (digits.endsWith('.')) this.fail('a decimal cannot end with "."')
      if (digits.length - digits.indexOf('.') - 1 > 3) this.fail('more than 3 fractional digits')
    }
    return sign * Number(digits)
  }

  private string(): string {
    this.expect('"')
    let value = ''
    while (!this.atEnd()) {
      const c = this.input[this.pos++]!
      if (c === '\\') {
        const escaped = this.input[this.pos++]
        if (escaped !== '"' && escaped !== '\\') this.fail('only \\" and \\\\ may be escaped in a string')
        value += escaped
      } else if (c === '"') {
        return value
      } else if (c < ' ' || c > '~') {
        this.fail('strings hold printable ASCII only')
      } else {
        value += c
      }
    }
    return this.fail('unterminated string')
  }

  private token(): Token {
    const start = this.pos
    this.pos++
    while (!this.atEnd() && TOKEN_CHAR.test(this.peek()!)) this.pos++
    return new Token(this.input.slice(start, this.pos))
  }

  private byteSequence(): Uint8Array {
    this.expect(':')
    const end = this.input.indexOf(':', this.pos)
    if (end === -1) this.fail('unterminated byte sequence')
    const encoded = this.input.slice(this.pos, end)
    if (!BASE64.test(encoded)) this.fail('invalid base64 in a byte sequence')
    this.pos = end + 1
    let binary: string
    try {
      binary = atob(encoded)
    } catch {
      return this.fail('invalid base64 in a byte sequence')
    }
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  }

  private boolean(): boolean {
    this.expect('?')
    const c = this.input[this.pos++]
    if (c === '1') return true
    if (c === '0') return false
    return this.fail('a boolean is ?0 or ?1')
  }

  private date(): Date {
    this.expect('@')
    const start = this.pos
    const seconds = this.number()
    if (this.input.slice(start, this.pos).includes('.')) this.fail('a date is an integer')
    return new Date(seconds * 1000)
  }

  /** RFC 9651 s4.2.10: percent-encoded UTF-8 with lowercase hex digits. */
  private displayString(): string {
    this.expect('%')
    this.expect('"')
    const bytes: number[] = []
    while (!this.atEnd()) {
      const c = this.input[this.pos++]!
      if (c < ' ' || c > '~') this.fail('display strings hold printable ASCII only')
      if (c === '%') {
        const hex = this.input.slice(this.pos, this.pos + 2)
        if (!/^[0-9a-f]{2}$/.test(hex)) this.fail('invalid percent-encoding in a display string')
        bytes.push(Number.parseInt(hex, 16))
        this.pos += 2
      } else if (c === '"') {
        try {
          return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes))
        } catch {
          return this.fail('invalid UTF-8 in a display string')
        }
      } else {
        bytes.push(c.charCodeAt(0))
      }
    }
    return this.fail('unterminated display string')
  }

  private skipOws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++
  }

  private expect(char: string): void {
    if (this.peek() !== char) this.fail(`expected "${char}"`)
    this.pos++
  }

  private peek(): string | undefined {
    return this.input[this.pos]
  }

  private atEnd(): boolean {
    return this.pos >= this.input.length
  }

  private fail(reason: string): never {
    throw new StructuredFieldError(`structured field: ${reason} at position ${this.pos}`)
  }
}
