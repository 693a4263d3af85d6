import { createLimiter, keyHash, StoreKeyError } from '@sluice/core'
import { KeyErrors } from '../src/key-errors'

const rule = createLimiter({ name: 'user', limit: 5, window: '1m' }).rules[0] as Parameters<KeyErrors['failed']>[1]
const cause = new Error('SLUICEKEY 1 holds a list')

function recording(maxKeys = 1000) {
  const lines: string[] = []
  const keyErrors = new KeyErrors({ warn: (m) => lines.push(m), error: (m) => lines.push(m) }, maxKeys)
  return { keyErrors, lines }
}

test('each request gets a StoreKeyError naming the key and the rule; the key is logged once', () => {
  const { keyErrors, lines } = recording()
  for (let i = 0; i < 3; i++) {
    const error = keyErrors.failed(cause, rule, 'mallory', 'sluice:user:sw:{mallory}', 'raw')
    expect(error).toBeInstanceOf(StoreKeyError)
    expect(error).toMatchObject({ key: 'mallory', keyHash: keyHash('mallory'), rule: 'user', cause })
    expect(error.message).toContain('"sluice:user:sw:{mallory}" (rule "user", key "mallory") holds a list')
  }
  expect(lines).toHaveLength(1)
  keyErrors.failed(cause, rule, 'trudy', 'sluice:user:sw:{trudy}', 'raw')
  expect(lines).toHaveLength(2)
})

test('without eventKeys raw, the error and the log line show the key by its keyHash only', () => {
  const { keyErrors, lines } = recording()
  const error = keyErrors.failed(cause, rule, 'apikey:sk_live_x', 'sluice:user:sw:{apikey:sk_live_x}')
  expect(error).toMatchObject({ key: undefined, keyHash: keyHash('apikey:sk_live_x'), rule: 'user' })
  expect(error.message).toContain(`rule "user" for the key with keyHash ${keyHash('apikey:sk_live_x')} holds a list`)
  for (const text of [error.message, ...lines]) expect(text).not.toContain('sk_live')
})

test('it remembers at most maxKeys logged keys, and a key that was reset is news again', () => {
  const { keyErrors, lines } = recording(2)
  for (const key of ['a', 'b', 'c', 'a']) keyErrors.failed(cause, rule, key, `sluice:user:sw:{${key}}`)
  expect(lines).toHaveLength(4) // 'a' was forgotten when 'c' came
  keyErrors.failed(cause, rule, 'c', 'sluice:user:sw:{c}')
  expect(lines).toHaveLength(4)
  keyErrors.forget('sluice:user:sw:{c}')
  keyErrors.failed(cause, rule, 'c', 'sluice:user:sw:{c}')
  expect(lines).toHaveLength(5)
})

test('a long key is cut in the message', () => {
  const { keyErrors } = recording()
  const long = 'k'.repeat(10_000)
  const error = keyErrors.failed(cause, rule, long, `sluice:user:sw:{${long}}`, 'raw')
  expect(error.message.length).toBeLessThan(1000)
  expect(error.key).toBe(long)
})
