import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { EventEmitter } from 'node:events'
import type { ShedEvent } from '@sluice/core'
import { createShedPolicy } from '@sluice/core/internal'

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
      { reason: 'overloaded', priority: 'normal', tenant: 'b', waitedMs: 0, inFlight: 1, waiting: 0 },
    ])
    first.emit('finish')
    first.close()
    expect(policy.shedder.inFlight).toBe(0)
  } finally {
    unsubscribe('sluice:shed', listener)
  }
})

test('a tenant function that returns no string is an error naming the option', () => {
  const policy = createShedPolicy<object>({ maxInFlight: 1, tenant: () => 42 as unknown as string })
  expect(() => policy.handle({}, new Raw())).toThrow(/option "tenant" must return a string \(got 42\)/)
})
