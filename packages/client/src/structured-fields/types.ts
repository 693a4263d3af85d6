/** A Token (RFC 9651 s3.3.4), kept apart from a String because the two are different types on the wire. */
export class Token {
  constructor(readonly value: string) {}
}

/** A bare value: Integer or Decimal (number), String or Display String (string), Token, Byte Sequence, Boolean, Date. */
export type BareItem = number | string | boolean | Token | Uint8Array | Date

/** Parameters of an Item or Inner List, in order; a repeated key keeps its last value (RFC 9651 s4.2.3.2). */
export type Parameters = ReadonlyMap<string, BareItem>

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
