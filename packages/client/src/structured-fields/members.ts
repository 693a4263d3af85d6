import { bareItem } from './bare-items'
import { type Cursor, isDigit, isLcAlpha } from './cursor'
import type { BareItem, Dictionary, InnerList, Item, ListMember, Parameters } from './types'

// Most items have no parameters: they share one empty map rather than each allocating its own, which in a field
// of thousands of bare items was most of the parse time (the garbage collector's).
const NO_PARAMETERS: Parameters = new Map()

/** RFC 9651 s4.2.1: members separated by commas, no trailing comma. */
export function list(cursor: Cursor): ListMember[] {
  const members: ListMember[] = []
  while (!cursor.atEnd()) {
    members.push(itemOrInnerList(cursor))
    cursor.skipOws()
    if (cursor.atEnd()) return members
    cursor.expect(',')
    cursor.skipOws()
    if (cursor.atEnd()) cursor.fail('trailing comma')
  }
  return members
}

/** RFC 9651 s4.2.2: key=member pairs separated by commas; a key alone is the Boolean true. */
export function dictionary(cursor: Cursor): Dictionary {
  const entries: Dictionary = new Map()
  while (!cursor.atEnd()) {
    const name = key(cursor)
    if (cursor.peek() === '=') {
      cursor.pos++
      entries.set(name, itemOrInnerList(cursor))
    } else {
      entries.set(name, { value: true, params: parameters(cursor) })
    }
    cursor.skipOws()
    if (cursor.atEnd()) return entries
    cursor.expect(',')
    cursor.skipOws()
    if (cursor.atEnd()) cursor.fail('trailing comma')
  }
  return entries
}

/** RFC 9651 s4.2.3: a Bare Item and its Parameters. */
export function item(cursor: Cursor): Item {
  const value = bareItem(cursor)
  return { value, params: parameters(cursor) }
}

function itemOrInnerList(cursor: Cursor): ListMember {
  return cursor.peek() === '(' ? innerList(cursor) : item(cursor)
}

function innerList(cursor: Cursor): InnerList {
  cursor.expect('(')
  const items: Item[] = []
  while (!cursor.atEnd()) {
    while (cursor.peek() === ' ') cursor.pos++
    if (cursor.peek() === ')') {
      cursor.pos++
      return { items, params: parameters(cursor) }
    }
    items.push(item(cursor))
    const next = cursor.peek()
    if (next !== ' ' && next !== ')') cursor.fail('expected a space or ")" in an inner list')
  }
  return cursor.fail('unterminated inner list')
}

function parameters(cursor: Cursor): Parameters {
  if (cursor.peek() !== ';') return NO_PARAMETERS
  const params = new Map<string, BareItem>()
  while (cursor.peek() === ';') {
    cursor.pos++
    while (cursor.peek() === ' ') cursor.pos++
    const name = key(cursor)
    let value: BareItem = true
    if (cursor.peek() === '=') {
      cursor.pos++
      value = bareItem(cursor)
    }
    params.set(name, value)
  }
  return params
}

function key(cursor: Cursor): string {
  const first = cursor.peek()
  if (!isLcAlpha(first) && first !== '*') cursor.fail('a key must start with a lowercase letter or "*"')
  const start = cursor.pos
  while (!cursor.atEnd()) {
    const c = cursor.peek()
    if (!(isLcAlpha(c) || isDigit(c) || c === '_' || c === '-' || c === '.' || c === '*')) break
    cursor.pos++
  }
  return cursor.input.slice(start, cursor.pos)
}
