/**
 * A small parser for HTTP Structured Field Values (RFC 9651), enough to read the RateLimit header fields without
 * a runtime dependency. It follows the parsing algorithms of RFC 9651 section 4.2 step by step and, as they
 * require, rejects the whole field on any syntax error: the caller then ignores the field. The types are in
 * types.ts, the position in the text in cursor.ts, the Bare Items in bare-items.ts, and the Lists, Dictionaries,
 * Inner Lists and Parameters made of them in members.ts.
 */
import { Cursor } from './cursor'
import { dictionary, item, list } from './members'
import type { Dictionary, Item, ListMember } from './types'

export {
  type BareItem,
  type Dictionary,
  type InnerList,
  type Item,
  isInnerList,
  type ListMember,
  type Parameters,
  StructuredFieldError,
  Token,
} from './types'

/** Parses a List field (RFC 9651 s4.2.1). Throws {@link StructuredFieldError} when malformed. */
export function parseList(field: string): ListMember[] {
  const cursor = new Cursor(field)
  const members = list(cursor)
  cursor.end()
  return members
}

/** Parses a Dictionary field (RFC 9651 s4.2.2). Throws {@link StructuredFieldError} when malformed. */
export function parseDictionary(field: string): Dictionary {
  const cursor = new Cursor(field)
  const members = dictionary(cursor)
  cursor.end()
  return members
}

/** Parses an Item field (RFC 9651 s4.2.3). Throws {@link StructuredFieldError} when malformed. */
export function parseItem(field: string): Item {
  const cursor = new Cursor(field)
  const parsed = item(cursor)
  cursor.end()
  return parsed
}
