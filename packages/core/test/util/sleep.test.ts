// The wait behind `schedule`: callers often pass one long-lived signal (a server's shutdown signal) to every call, so a
// wait must take its abort listener off again, however it ends, or the signal collects one per request.
import { getEventListeners } from 'node:events'
import { sleep } from '../../src/util/sleep'

afterEach(() => jest.useRealTimers())

test('waits that end leave no listener on a shared signal', async () => {
  jest.useFakeTimers()
  const shutdown = new AbortController()
  const waits = [sleep(10, shutdown.signal), sleep(20, shutdown.signal)]
  expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(2)
  await jest.advanceTimersByTimeAsync(20)
  await Promise.all(waits)
  expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0)
})

test("an abort ends the wait at once with the signal's reason, and leaves no listener", async () => {
  jest.useFakeTimers()
  const controller = new AbortController()
  const waiting = sleep(60_000, controller.signal)
  const reason = new Error('client went away')
  controller.abort(reason)
  await expect(waiting).rejects.toBe(reason)
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  expect(jest.getTimerCount()).toBe(0)
})
