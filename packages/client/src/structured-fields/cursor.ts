import { StructuredFieldError } from './types'

/**
 * The text of one field and the position the parse has reached in it: what every step of the parsing algorithms of
 * RFC 9651 s4.2 reads, advances and fails on.
 */
export class Cursor {
  pos = 0
  readonly input: string

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

  skipOws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++
  }

  expect(char: string): void {
    if (this.peek() !== char) this.fail(`expected "${char}"`)
    this.pos++
  }

  peek(): string | undefined {
    return this.input[this.pos]
  }

  atEnd(): boolean {
    return this.pos >= this.input.length
  }

  fail(reason: string): never {
    throw new StructuredFieldError(`structured field: ${reason} at position ${this.pos}`)
  }
}

export const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'
export const isLcAlpha = (c: string | undefined) => c !== undefined && c >= 'a' && c <= 'z'
export const isAlpha = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
