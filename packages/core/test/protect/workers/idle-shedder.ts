// Run in a process of its own by event-loop-delay.test.ts, where nothing else wakes the process: counts its
// wake-ups per second (voluntary context switches) quiet, with a request every 100 ms and no shedder, with the same
// requests through a shedder with maxEventLoopDelay, and once that shedder has gone idle. Prints them as JSON.
import { createShedder } from '../../../src/protect/shedder'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function wakeUpsPerSecond(ms: number, during?: () => void): Promise<number> {
  const before = process.resourceUsage().voluntaryContextSwitches
  const until = performance.now() + ms
  if (during === undefined) await sleep(ms)
  else
    while (performance.now() < until) {
      during()
      await sleep(100)
    }
  return ((process.resourceUsage().voluntaryContextSwitches - before) * 1000) / ms
}

async function main(): Promise<void> {
  // Module loading (and tsx's compiler thread) settle first.
  await sleep(500)
  const quiet = await wakeUpsPerSecond(1000)
  const baseline = await wakeUpsPerSecond(500, () => undefined)
  const shedder = createShedder({ maxInFlight: 100, maxEventLoopDelay: '200ms' })
  const request = () => shedder.admit().release()
  // Requests every 100 ms, the same wake-ups as the baseline's, plus whatever the shedder adds.
  const busy = await wakeUpsPerSecond(500, request)
  // A second after the last request the monitor stops (1.5 s leaves room for a late timer on a busy machine).
  await sleep(1500)
  const idle = await wakeUpsPerSecond(1000)
  console.log(JSON.stringify({ quiet, baseline, busy, idle }))
}

void main()
