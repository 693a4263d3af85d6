// The time source of the protection parts: real time by default, an injected one checked at construction, and one
// pending timer for all of a shedder's deadlines.
import { createShedder, InvalidOptionError, type ShedderOptions } from '@sluice/core'
import { VirtualTime } from '../../../../examples/overload/virtual-time'
import { realTimers } from '../../src/protect/timers'

afterEach(() => {
  jest.useRealTimers()
})

test('real timers fire when due, can be cleared, and never keep the process alive', () => {
  jest.useFakeTimers()
  const fired: string[] = []
  const handle = realTimers.setTimeout(() => fired.push('due'), 100)
  const cleared = realTimers.setTimeout(() => fired.push('cleared'), 100)
  realTimers.clearTimeout(cleared)
  expect((handle as NodeJS.Timeout).hasRef()).toBe(false)
  jest.advanceTimersByTime(99)
  expect(fired).toEqual([])
  jest.advanceTimersByTime(1)
  expect(fired).toEqual(['due'])
})

test.each<[string, unknown, string]>([
  ['null', null, 'null'],
  ['a function', () => 0, 'a function'],
  ['no now()', { setTimeout() {}, clearTimeout() {} }, 'object'],
  ['no setTimeout()', { now: () => 0, clearTimeout() {} }, 'object'],
  ['no clearTimeout()', { now: () => 0, setTimeout() {} }, 'object'],
])('injected timers must have now(), setTimeout() and clearTimeout(): %s is refused', (_name, timers, got) => {
  let refused: unknown
  try {
    createShedder({ maxInFlight: 1, timers } as unknown as ShedderOptions)
  } catch (error) {
    refused = error
  }
  expect(refused).toBeInstanceOf(InvalidOptionError)
  expect((refused as Error).message).toBe(
    `sluice: option "timers" must have now(), setTimeout() and clearTimeout() (got ${got})`,
  )
})

test('a shedder keeps one timer, for the next deadline, and none once nobody waits', () => {
  const time = new VirtualTime()
  const pending = new Set<unknown>()
  const timers = {
    now: () => time.now(),
    setTimeout(callback: () => void, delayMs: number) {
      const handle = time.setTimeout(() => {
        pending.delete(handle)
        callback()
      }, delayMs)
      pending.add(handle)
      return handle
    },
    clearTimeout(handle: unknown) {
      pending.delete(handle)
      time.clearTimeout(handle)
    },
  }
  const shedder = createShedder({ maxInFlight: 1, queue: 5, maxWait: '1s', timers })
  const running = shedder.admit()
  const waiters = [shedder.admit(), shedder.admit(), shedder.admit()]
  expect(pending.size).toBe(1)
  for (const waiter of waiters) waiter.release()
  expect(pending.size).toBe(0)
  running.release()
  expect(pending.size).toBe(0)
})
