// Redis Cluster key slots: CRC16 (XMODEM: polynomial 0x1021, initial 0) of the key's hash tag, modulo 16384,
// as the Redis Cluster specification defines it ("Keys distribution model").

const TABLE = new Uint16Array(256)
for (let i = 0; i < 256; i++) {
  let crc = i << 8
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  TABLE[i] = crc
}

function crc16(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number)
  return crc
}

/** The cluster slot of a key: only the part between the first '{' and the next '}' counts, when not empty. */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8')
  const open = bytes.indexOf(0x7b)
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1)
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) & 16383
  }
  return crc16(bytes) & 16383
}
