import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { createShedder } from '@sluice/core'
import { VirtualTime } from '../../../../examples/overload/virtual-time'
import { type DelayHistogram, EventLoopDelay } from '../../src/protect/event-loop-delay'
import { countingTimers } from '../helpers/counting-timers'

/** A histogram the test fills: its mean in ns, as perf_hooks reports it. */
function fakeHistogram() {
  const samples: number[] = []
  const histogram: DelayHistogram & { record(ms: number): void; enabled: boolean; resets: number } = {
    enabled: false,
    resets: 0,
    record: (ms) => samples.push(ms * 1e6),
    enable: () => {
      histogram.enabled = true
      return true
    },
    disable: () => {
      histogram.enabled = false
      return true
    },
    reset: () => {
      histogram.resets++
      samples.length = 0
    },
    get count() {
      return samples.length
    },
    get mean() {
      return samples.length === 0 ? Number.NaN : samples.reduce((a, b) => a + b, 0) / samples.length
    },
  }
  return histogram
}

test('each reading is the last window alone, not a lifetime average', () => {
  const time = new VirtualTime()
  const histogram = fakeHistogram()
  const lag = new EventLoopDelay({ timers: time, histogram: () => histogram })
  expect(lag.read(0)).toBe(0)
  expect(histogram.enabled).toBe(true)
  // A window of heavy lag: the timer fired 20 ms late on average (the histogram counts the 20 ms interval too).
  for (let i = 0; i < 5; i++) histogram.record(40)
  time.runUntil(250)
  expect(lag.read(250)).toBe(20)
  // A calm window after it reads calm: a lifetime mean would still read 10.
  for (let i = 0; i < 5; i++) histogram.record(20)
  time.runUntil(500)
  expect(lag.read(500)).toBe(0)
  expect(histogram.resets).toBe(3)
})

test('never NaN or Infinity: an empty window reads 0, or the time the loop held the timer back', () => {
  const time = new VirtualTime()
  const histogram = fakeHistogram()
  const lag = new EventLoopDelay({ timers: time, histogram: () => histogram })
  lag.read(0)
  time.runUntil(250)
  // perf_hooks reports NaN as the mean of no samples: the signal does not pass it on. No sample in 250 ms means
  // the loop never let the 20 ms timer fire.
  expect(lag.read(250)).toBe(230)
  const values = [lag.read(260), lag.read(600)]
  for (const value of values) expect(Number.isFinite(value)).toBe(true)
})

test('the monitor runs only while someone reads: it stops a second after the last reading', () => {
  const time = new VirtualTime()
  const histogram = fakeHistogram()
  const lag = new EventLoopDelay({ timers: time, histogram: () => histogram })
  lag.read(0)
  time.runUntil(900)
  lag.read(900)
  time.runUntil(1899)
  expect(lag.active).toBe(true)
  time.runUntil(1900)
  expect(lag.active).toBe(false)
  expect(histogram.enabled).toBe(false)
  lag.read(2500)
  expect(histogram.enabled).toBe(true)
})

test('on a real event loop: a blocked loop sheds normal work (never critical) and the next calm window does not', async () => {
  const shedder = createShedder({ maxInFlight: 100, maxEventLoopDelay: '50ms' })
  shedder.admit().release() // starts the monitor
  await new Promise((resolve) => setTimeout(resolve, 50))
  // Hold the loop for 300 ms in one callback, as a synchronous JSON.parse of a huge body would.
  await new Promise<void>((resolve) =>
    setImmediate(() => {
      const until = performance.now() + 300
      while (performance.now() < until) {}
      resolve()
    }),
  )
  await new Promise((resolve) => setTimeout(resolve, 30))
  const shed = shedder.admit({ priority: 'normal' })
  expect([shed.state, shed.reason]).toEqual(['shed', 'event-loop'])
  const critical = shedder.admit({ priority: 'critical' })
  expect(critical.state).toBe('running')
  critical.release()
  // Two calm windows later the signal reads the calm, not an average that still remembers the block.
  for (let i = 0; i < 12; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    shedder.admit().release()
  }
  const calm = shedder.admit({ priority: 'normal' })
  expect(calm.state).toBe('running')
  calm.release()
})

test('an idle shedder costs the process no wake-ups beyond a few per second', () => {
  // In a process of its own (a jest worker has threads of its own that wake it): voluntary context switches
  // count how often the process slept and was woken.
  const child = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'workers', 'idle-shedder.ts')], {
    encoding: 'utf8',
    timeout: 20_000,
  })
  expect(child.stderr).toBe('')
  const { quiet, baseline, busy, idle } = JSON.parse(child.stdout) as Record<string, number>
  console.log(
    `wake-ups per second: quiet ${quiet}, requests ${baseline}, requests through the shedder ${busy}, idle ${idle}`,
  )
  // While requests come, the monitor's 20 ms timer wakes the process up to 50 times a second (fewer on a loaded
  // machine, where late timers fire together): the measure sees it.
  expect(busy).toBeGreaterThan((baseline as number) + 15)
  // Once idle, the shedder adds no more than a few wake-ups a second to a quiet process.
  expect(idle).toBeLessThanOrEqual((quiet as number) + 5)
})

describe('the reading of a window', () => {
  function monitor() {
    const time = new VirtualTime()
    const histogram = fakeHistogram()
    const { timers, timersSet } = countingTimers(time)
    const lag = new EventLoopDelay({ timers, histogram: () => histogram })
    return { time, histogram, lag, timersSet }
  }

  test('a reading within a window is the last complete window, until the next one completes', () => {
    const { histogram, lag } = monitor()
    lag.read(0)
    for (let i = 0; i < 5; i++) histogram.record(40)
    expect(lag.read(100)).toBe(0)
    expect(lag.read(250)).toBe(20)
    for (let i = 0; i < 5; i++) histogram.record(80)
    expect(lag.read(300)).toBe(20)
    expect(lag.read(499)).toBe(20)
    expect(lag.read(500)).toBe(60)
  })

  test('an empty window read late counts the whole time since the window began as held back', () => {
    const { histogram, lag } = monitor()
    lag.read(0)
    histogram.record(20)
    expect(lag.read(250)).toBe(0)
    // No firing from 250 to 650 ms: the loop held the 20 ms timer back for about 380 ms.
    expect(lag.read(650)).toBe(380)
  })

  test('a timer that fires early reads as no delay, never a negative one', () => {
    const { histogram, lag } = monitor()
    lag.read(0)
    histogram.record(19)
    expect(lag.read(250)).toBe(0)
  })

  test('a monitor stopped by hand sets no further idle checks', () => {
    const { time, lag, timersSet } = monitor()
    lag.read(0)
    lag.read(600)
    lag.stop()
    expect(lag.active).toBe(false)
    time.runUntil(5_000)
    expect(timersSet()).toBe(1)
  })
})
