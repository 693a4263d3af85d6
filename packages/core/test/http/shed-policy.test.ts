import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { EventEmitter } from 'node:events'
import { keyHash, type ShedEvent } from '@sluice/core'
import { createShedPolicy } from '@sluice/core/internal'
import { VirtualTime } from '../../../../examples/overload/virtual-time'

/** A raw response: emits 'finish' and 'close' as Node's does, and knows whether it has closed. */
class Raw extends EventEmitter {
  closed = false
  close(): void {
    this.closed = true
    this.emit('close')
  }
}

test('a shed request is published on sluice:shed and answered 503, and an admitted one frees its slot at close', async () => {
  const events: ShedEvent[] = []
  const listener = (message: unknown) => events.push(message as ShedEvent)
  subscribe('sluice:shed', listener)
  try {
    const policy = createShedPolicy<{ tenant: string }>({ maxInFlight: 1, queue: 0, tenant: (req) => req.tenant })
    const first = new Raw()
    expect(await policy.handle({ tenant: 'a' }, first)).toEqual({ action: 'pass' })
    const verdict = await policy.handle({ tenant: 'b' }, new Raw())
    expect(verdict).toEqual({
      action: 'reject',
      status: 503,
      headers: [
        ['Retry-After', '1'],
        ['Cache-Control', 'no-store'],
      ],
      body: { error: 'overloaded', retryAfter: 1 },
    })
    expect(events).toEqual([
      { reason: 'overloaded', priority: 'normal', tenantHash: keyHash('b'), waitedMs: 0, inFlight: 1, waiting: 0 },
    ])
    first.emit('finish')
    first.close()
    expect(policy.shedder.inFlight).toBe(0)
  } finally {
    unsubscribe('sluice:shed', listener)
  }
})

// sluice:shed published the tenant raw (an API key, a customer id), while the limiters' events hash their keys.
test('sluice:shed carries the tenant as tenantHash by default, and the tenant itself only with eventKeys: raw', async () => {
  const events: ShedEvent[] = []
  const listener = (message: unknown) => events.push(message as ShedEvent)
  subscribe('sluice:shed', listener)
  try {
    for (const eventKeys of [undefined, 'raw'] as const) {
      const policy = createShedPolicy<{ tenant: string }>({
        maxInFlight: 1,
        queue: 0,
        tenant: (req) => req.tenant,
        ...(eventKeys === undefined ? {} : { eventKeys }),
      })
      await policy.handle({ tenant: 'sk_live_a' }, new Raw())
      await policy.handle({ tenant: 'sk_live_b' }, new Raw())
    }
  } finally {
    unsubscribe('sluice:shed', listener)
  }
  expect(events).toHaveLength(2)
  expect(events[0]).not.toHaveProperty('tenant')
  expect(JSON.stringify(events[0])).not.toContain('sk_live')
  expect(events[0]).toMatchObject({ tenantHash: keyHash('sk_live_b') })
  expect(events[1]).toMatchObject({ tenantHash: keyHash('sk_live_b'), tenant: 'sk_live_b' })
})

test('an eventKeys that is neither hash nor raw is an InvalidOptionError naming it', () => {
  expect(() => createShedPolicy({ maxInFlight: 1, eventKeys: 'plain' as 'raw' })).toThrow(/option "eventKeys"/)
})

test('a tenant function that returns no string is an error naming the option', () => {
  const policy = createShedPolicy<object>({ maxInFlight: 1, tenant: () => 42 as unknown as string })
  expect(() => policy.handle({}, new Raw())).toThrow(/option "tenant" must return a string \(got 42\)/)
})

test('a waiter is answered when it is decided: a slot (pass) or its deadline (503)', async () => {
  const time = new VirtualTime()
  const policy = createShedPolicy<object>({ maxInFlight: 1, queue: 2, maxWait: '1s', timers: time })
  const first = new Raw()
  expect(policy.handle({}, first)).toEqual({ action: 'pass' })
  const started = policy.handle({}, new Raw())
  const late = policy.handle({}, new Raw())
  expect(started).toBeInstanceOf(Promise)
  first.emit('finish')
  expect(await started).toEqual({ action: 'pass' })
  time.runUntil(1000)
  expect(await late).toMatchObject({ action: 'reject', status: 503, body: { error: 'overloaded', retryAfter: 1 } })
})

test('a client that leaves the line is not published as shed', async () => {
  const events: unknown[] = []
  const listener = (message: unknown) => events.push(message)
  subscribe('sluice:shed', listener)
  try {
    const policy = createShedPolicy<object>({ maxInFlight: 1, queue: 1, maxWait: '1s' })
    policy.handle({}, new Raw())
    const leaving = new Raw()
    const verdict = policy.handle({}, leaving)
    leaving.close()
    await verdict
    expect(events).toEqual([])
    expect(policy.shedder.waiting).toBe(0)
  } finally {
    unsubscribe('sluice:shed', listener)
  }
})

test('skip lets a request bypass the shedder', () => {
  const policy = createShedPolicy<{ health: boolean }>({ maxInFlight: 1, queue: 0, skip: (req) => req.health })
  expect(policy.handle({ health: false }, new Raw())).toEqual({ action: 'pass' })
  expect(policy.handle({ health: true }, new Raw())).toEqual({ action: 'pass' })
  expect(policy.shedder.inFlight).toBe(1)
})

test('shedLoad options that are not an object are an error naming them', () => {
  expect(() => createShedPolicy([] as never)).toThrow('sluice: option "options" must be an object (got an array)')
})
