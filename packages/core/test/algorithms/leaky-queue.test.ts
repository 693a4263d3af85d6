// The leaky bucket as a queue (what `schedule` waits on): departures a third of a millisecond apart stay exact, a clock
// that steps back leaves the queue at most full, and a refund of everything forgets the key.
import { createLimiter } from '@sluice/core'
import { type AlgorithmParams, type LeakyQueueState, leakyQueue, leakyQueueRefund } from '../../src/algorithms'

// 3 per second: one departure every 333 1/3 ms.
const rule = createLimiter({ algorithm: 'leaky-bucket', limit: 3, window: '1s' }).rules[0] as AlgorithmParams

test('departures a fractional interval apart: the k-th request waits k thirds of a second, rounded up', () => {
  let state: LeakyQueueState | undefined
  const delays: number[] = []
  for (let k = 1; k <= 3; k++) {
    const step = leakyQueue(state, 0, 1, rule, true)
    delays.push(step.delayMs)
    state = step.state
  }
  expect(delays).toEqual([334, 667, 1000])
})

test('a clock stepped back reads the queue as full as of now, never fuller', () => {
  // Two requests at 1000 depart at 1666 2/3; the clock then reads 666: 1000 2/3 ms of queue, a window's worth and more.
  let state = leakyQueue(undefined, 1000, 1, rule, true).state
  state = leakyQueue(state, 1000, 1, rule, true).state
  const back = leakyQueue(state, 666, 1, rule, false)
  expect(back).toMatchObject({ allowed: false, remaining: 0, resetMs: 1000, retryAfterMs: 334 })
  // From there it drains as a full queue does: room for one after 333 1/3 ms.
  expect(leakyQueue(back.state, 666 + 333, 1, rule, false).allowed).toBe(false)
  expect(leakyQueue(back.state, 666 + 334, 1, rule, true)).toMatchObject({ allowed: true, remaining: 0, delayMs: 1000 })
})

test('refunding every queued request forgets the key; refunding part keeps the rest queued', () => {
  const one = leakyQueue(undefined, 0, 1, rule, true).state
  expect(leakyQueueRefund(one, 0, 1, rule)).toMatchObject({ state: undefined, remaining: 3, resetMs: 0 })
  expect(leakyQueueRefund(one, 0, 2, rule)).toMatchObject({ state: undefined, remaining: 3, resetMs: 0 })
  const two = leakyQueue(one, 0, 1, rule, true).state
  expect(leakyQueueRefund(two, 0, 1, rule)).toMatchObject({ remaining: 2, resetMs: 334 })
})
