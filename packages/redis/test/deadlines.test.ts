import { Deadlines } from '../src/deadlines'

beforeEach(() => jest.useFakeTimers())
afterEach(() => jest.useRealTimers())

/** A call that settles only when told to. */
function pending<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve!: (value: T) => void
  let reject!: (error: Error) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

test('a call that does not settle is rejected at its own deadline, not later', async () => {
  const deadlines = new Deadlines(100)
  const outcomes: string[] = []
  const track = (name: string, promise: Promise<unknown>) =>
    promise.then(
      () => outcomes.push(`${name} ok`),
      (error: Error) => outcomes.push(`${name} ${error.message}`),
    )
  const first = track(
    'first',
    deadlines.run(() => pending().promise),
  )
  await jest.advanceTimersByTimeAsync(30)
  const second = track(
    'second',
    deadlines.run(() => pending().promise),
  )
  await jest.advanceTimersByTimeAsync(69)
  expect(outcomes).toEqual([])
  await jest.advanceTimersByTimeAsync(1)
  await first
  expect(outcomes).toEqual(['first Redis did not answer within 100 ms'])
  await jest.advanceTimersByTimeAsync(29)
  expect(outcomes.length).toBe(1)
  await jest.advanceTimersByTimeAsync(1)
  await second
  expect(outcomes).toEqual(['first Redis did not answer within 100 ms', 'second Redis did not answer within 100 ms'])
})

test('a call that settles in time keeps its answer or its error, and a late one is absorbed', async () => {
  const deadlines = new Deadlines(100)
  const answered = pending<string>()
  const failing = pending<string>()
  const late = pending<string>()
  const results = [
    deadlines.run(() => answered.promise),
    deadlines.run(() => failing.promise),
    deadlines.run(() => late.promise),
  ].map((promise) =>
    promise.then(
      (value) => `ok ${value}`,
      (error: Error) => error.message,
    ),
  )
  answered.resolve('pong')
  failing.reject(new Error('READONLY'))
  await jest.advanceTimersByTimeAsync(100)
  late.resolve('too late') // after the deadline: changes nothing and is not unhandled
  expect(await Promise.all(results)).toEqual(['ok pong', 'READONLY', 'Redis did not answer within 100 ms'])
})

test('ten thousand calls that settle in time set one timer per timeout, not one each', async () => {
  const deadlines = new Deadlines(100)
  const spy = jest.spyOn(global, 'setTimeout')
  for (let ms = 0; ms < 1000; ms++) {
    const calls = Array.from({ length: 10 }, () => deadlines.run(() => Promise.resolve(ms)))
    await Promise.all(calls)
    await jest.advanceTimersByTimeAsync(1)
  }
  // One timer when the first call starts, then at most one more each time it fires (every ~100 ms).
  expect(spy.mock.calls.length).toBeLessThanOrEqual(12)
  spy.mockRestore()
  // Once nothing waits, the timer stops: nothing is left to keep a process alive or to fire.
  await jest.advanceTimersByTimeAsync(200)
  expect(jest.getTimerCount()).toBe(0)
})

test('calls that settle out of order each keep their own deadline', async () => {
  const deadlines = new Deadlines(100)
  const slow = pending<string>()
  const quick = pending<string>()
  const later = pending<string>()
  const settle = (promise: Promise<string>) =>
    promise.then(
      (value) => `ok ${value}`,
      (error: Error) => error.message,
    )
  const first = settle(deadlines.run(() => slow.promise))
  await jest.advanceTimersByTimeAsync(10)
  const second = settle(deadlines.run(() => quick.promise))
  await jest.advanceTimersByTimeAsync(10)
  const third = settle(deadlines.run(() => later.promise))
  quick.resolve('second') // settles while the call before it still waits
  await jest.advanceTimersByTimeAsync(80)
  expect(await first).toBe('Redis did not answer within 100 ms')
  expect(await second).toBe('ok second')
  await jest.advanceTimersByTimeAsync(15)
  later.resolve('third') // 95 ms after it started: in time
  expect(await third).toBe('ok third')
})
