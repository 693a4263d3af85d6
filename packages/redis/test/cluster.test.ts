// The per-slot split on its own; test/redis/cluster.test.ts runs it, with its refunds, on a real Redis Cluster.
import { groupBySlot, pick } from '../src/cluster'
import { keySlot } from '../src/slot'

test('groups rules by the slot of their keys, in the order of the rules', () => {
  const keys = ['p:user:sw:{alice}', 'p:tenant:sw:{acme}', 'p:global:tb:{alice}', 'p:ip:fw:{acme}']
  expect(keySlot('{alice}')).not.toBe(keySlot('{acme}'))
  expect(groupBySlot(keys)).toEqual([
    [0, 2],
    [1, 3],
  ])
  expect(pick(keys, [1, 3])).toEqual(['p:tenant:sw:{acme}', 'p:ip:fw:{acme}'])
})

test('one user key puts every rule in one slot: one group, one call', () => {
  expect(groupBySlot(['a:r1:sw:{k}', 'a:r2:tb:{k}', 'b:r3:fw:{k}'])).toEqual([[0, 1, 2]])
})

test('slots follow the Redis Cluster specification: CRC16 of the hash tag, modulo 16384', () => {
  // The specification's own example: CRC16("123456789") = 0x31C3, slot 12739.
  expect(keySlot('123456789')).toBe(0x31c3 % 16384)
  expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'))
  // Only the part between the first '{' and the next '}' counts: here '{bar'.
  expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'))
})
