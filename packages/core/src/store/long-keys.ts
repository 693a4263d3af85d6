import { sha256Utf16le } from '../runtime/builtins'

/**
 * The longest key a store keeps as it is, in UTF-16 code units (as `String.length` counts them). A longer key is kept
 * by its {@link longKeyDigest}, so each key costs a store a bounded amount (`maxKeys` bounds the number of keys, not
 * their size) while the keys people use (addresses, user ids, API keys) stay readable.
 *
 * @example
 * const kept = key.length > MAX_KEPT_KEY_LENGTH ? longKeyDigest(key) : key
 */
export const MAX_KEPT_KEY_LENGTH = 256

/**
 * What a store keeps a long key by: the SHA-256 of its UTF-16 code units, in hex (64 characters). Every store uses
 * this one function, so a key counts in the same place whichever store holds it. Two long keys share a digest only
 * by a SHA-256 collision: about 2^-128 per pair even for keys chosen to collide, and nobody can craft a key to land
 * on another's counter. The code units are hashed as they are (UTF-8 would turn every lone surrogate into U+FFFD,
 * and so merge keys that differ only there). A store keeps digests apart from short keys, so a short key that
 * happens to read like a digest never shares its counter. Hashing costs about 3.5 µs for a 257-character key and
 * 28 µs for 15 000 characters, paid only by keys that long.
 *
 * @example
 * longKeyDigest('k'.repeat(300)).length // 64
 */
export function longKeyDigest(key: string): string {
  return sha256Utf16le(key)
}
