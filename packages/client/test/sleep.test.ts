import { timerSleep } from '../src/sleep'

// The default sleep alone, on jest's fake timers (no I/O here, so faking every timer is safe).
describe('timerSleep', () => {
  beforeEach(() => jest.useFakeTimers())
  afterEach(() => jest.useRealTimers())

  it('resolves after the time given, not before', async () => {
    let done = false
    const sleeping = timerSleep(1000).then(() => {
      done = true
    })
    await jest.advanceTimersByTimeAsync(999)
    expect(done).toBe(false)
    await jest.advanceTimersByTimeAsync(1)
    await sleeping
    expect(done).toBe(true)
  })

  it('rejects with the reason on abort and clears its timer, so nothing is left holding the process', async () => {
    const controller = new AbortController()
    const sleeping = timerSleep(60_000, controller.signal)
    expect(jest.getTimerCount()).toBe(1)
    const reason = new Error('stop')
    controller.abort(reason)
    await expect(sleeping).rejects.toBe(reason)
    expect(jest.getTimerCount()).toBe(0)
  })

  it('waits a wait beyond 2^31 - 1 ms (24.8 days) to its end: setTimeout fired such a timer after 1 ms', async () => {
    const thirtyDaysMs = 30 * 24 * 3600 * 1000
    let done = false
    const sleeping = timerSleep(thirtyDaysMs).then(() => {
      done = true
    })
    await jest.advanceTimersByTimeAsync(1)
    expect(done).toBe(false)
    await jest.advanceTimersByTimeAsync(2 ** 31)
    expect(done).toBe(false)
    await jest.advanceTimersByTimeAsync(thirtyDaysMs - 2 ** 31 - 2)
    expect(done).toBe(false)
    await jest.advanceTimersByTimeAsync(1)
    await sleeping
    expect(done).toBe(true)
  })

  it('an abort during the second leg of a long wait clears that leg', async () => {
    const controller = new AbortController()
    const sleeping = timerSleep(3 * 2 ** 31, controller.signal)
    await jest.advanceTimersByTimeAsync(2 ** 31)
    expect(jest.getTimerCount()).toBe(1)
    controller.abort(new Error('stop'))
    await expect(sleeping).rejects.toThrow('stop')
    expect(jest.getTimerCount()).toBe(0)
  })

  it('rejects at once for a signal already aborted, without a timer', async () => {
    const reason = new Error('already')
    await expect(timerSleep(10, AbortSignal.abort(reason))).rejects.toBe(reason)
    expect(jest.getTimerCount()).toBe(0)
  })
})
