import { idleMs } from '../src/idle-time'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test('idle time grows while the event loop waits for I/O or a timer, and not while this instance runs code', async () => {
  await sleep(200) // the test runner's own start-up work keeps the loop busy for a while
  const before = idleMs()
  const until = performance.now() + 30
  while (performance.now() < until) {} // busy: no idle time, and the same reading within this turn
  expect(idleMs()).toBe(before)
  await sleep(30) // the loop waits in its poll phase
  expect(idleMs()).toBeGreaterThan(before)
})
