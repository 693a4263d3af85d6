// The shedder's mechanics, one rule at a time, on virtual time (the same VirtualTime the overload experiments use):
// every instant below is exact.
import { createShedder, type ShedderOptions, type Ticket } from '@sluice/core'
import { VirtualTime } from '../../../examples/overload/virtual-time'

function shedderAt(options: Omit<ShedderOptions, 'timers'>) {
  const time = new VirtualTime()
  return { time, shedder: createShedder({ ...options, timers: time }) }
}

/** Admits requests by name, and records the order in which they start or are shed. */
function recorder() {
  const started: string[] = []
  const shed: string[] = []
  const tickets = new Map<string, Ticket>()
  const admit = (shedder: ReturnType<typeof createShedder>, id: string, request = {}): Ticket => {
    const ticket = shedder.admit(request, (decided) => {
      if (decided.state === 'running') started.push(id)
      if (decided.state === 'shed') shed.push(id)
    })
    if (ticket.state === 'running') started.push(id)
    if (ticket.state === 'shed') shed.push(id)
    tickets.set(id, ticket)
    return ticket
  }
  const release = (id: string) => tickets.get(id)?.release()
  return { started, shed, admit, release }
}

test('starts at once while a slot is free, then queues; a release starts the oldest waiter', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 2, queue: 2, maxWait: '1s' })
  const { started, shed, admit } = recorder()
  const a = admit(shedder, 'a')
  admit(shedder, 'b')
  time.runUntil(1)
  admit(shedder, 'c')
  time.runUntil(2)
  admit(shedder, 'd')
  admit(shedder, 'e')
  expect([shedder.inFlight, shedder.waiting]).toEqual([2, 2])
  expect(shed).toEqual(['e'])
  a.release()
  expect(started).toEqual(['a', 'b', 'c'])
  expect(shedder.waiting).toBe(1)
})

test('release is idempotent: a second call frees no second slot', () => {
  const { shedder } = shedderAt({ maxInFlight: 1, queue: 2, maxWait: '1s' })
  const { started, admit } = recorder()
  const a = admit(shedder, 'a')
  admit(shedder, 'b')
  admit(shedder, 'c')
  a.release()
  a.release()
  expect(started).toEqual(['a', 'b'])
  expect([shedder.inFlight, shedder.waiting]).toEqual([1, 1])
})

test('a waiter is answered at its deadline to the millisecond and never starts after it', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 1, queue: 1, maxWait: '250ms' })
  const { started, admit } = recorder()
  const a = admit(shedder, 'a')
  time.runUntil(10)
  const b = admit(shedder, 'b')
  time.runUntil(259)
  expect(b.state).toBe('waiting')
  time.runUntil(260)
  expect(b.state).toBe('shed')
  expect(b.reason).toBe('deadline')
  expect(b.waitedMs).toBe(250)
  a.release()
  expect(started).toEqual(['a'])
})

test('a client that leaves the line is told so, and frees its place', async () => {
  const { shedder } = shedderAt({ maxInFlight: 1, queue: 1, maxWait: '1s' })
  shedder.admit()
  const waiter = shedder.admit()
  const decided = waiter.decided()
  waiter.release()
  expect((await decided).state).toBe('released')
  expect(shedder.waiting).toBe(0)
  expect(shedder.admit().state).toBe('waiting')
})

test('critical work waits beyond a full line while less important work runs, and displaces less important waiters', () => {
  const { shedder } = shedderAt({ maxInFlight: 2, queue: 1, maxWait: '1s' })
  const { started, shed, admit } = recorder()
  const running = [admit(shedder, 'n1'), admit(shedder, 'n2')]
  admit(shedder, 'n3')
  admit(shedder, 'c1', { priority: 'critical' })
  expect(shed).toEqual(['n3'])
  // Two normal requests run: two more critical ones may wait for their slots, past the line of 1.
  admit(shedder, 'c2', { priority: 'critical' })
  admit(shedder, 'c3', { priority: 'critical' })
  admit(shedder, 'c4', { priority: 'critical' })
  expect(shed).toEqual(['n3', 'c4'])
  for (const ticket of running) ticket.release()
  expect(started).toEqual(['n1', 'n2', 'c1', 'c2'])
})

test('a normal request shed makes sheddable work wait its turn: none starts for an interval', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 1, queue: 1, maxWait: '1s' })
  const { started, shed, admit } = recorder()
  const first = admit(shedder, 'n1')
  admit(shedder, 'n2')
  admit(shedder, 'n3') // the line is full: shed
  time.runUntil(50)
  first.release() // n2 starts
  admit(shedder, 's1', { priority: 'sheddable' })
  expect(shed).toEqual(['n3', 's1'])
  time.runUntil(101)
  admit(shedder, 's2', { priority: 'sheddable' })
  expect(shed).toEqual(['n3', 's1'])
  expect(started).toEqual(['n1', 'n2'])
})

test('fair shares: the tenant with fewer requests in flight starts first; a full line drops the most over-share tenant', () => {
  const { shedder } = shedderAt({ maxInFlight: 2, queue: 2, maxWait: '1s' })
  const { started, shed, admit } = recorder()
  const x1 = admit(shedder, 'x1', { tenant: 'x' })
  admit(shedder, 'x2', { tenant: 'x' })
  admit(shedder, 'x3', { tenant: 'x' })
  admit(shedder, 'x4', { tenant: 'x' })
  // The line is full of x's waiters, and x has 2 in flight: y's request takes x's newest place.
  admit(shedder, 'y1', { tenant: 'y' })
  expect(shed).toEqual(['x4'])
  x1.release()
  expect(started).toEqual(['x1', 'x2', 'y1'])
})

test('adaptive LIFO: first come first served in a burst, the newest first once the queue stands', () => {
  const { time, shedder } = shedderAt({
    maxInFlight: 1,
    queue: 10,
    maxWait: '10s',
    queueOrder: 'adaptive-lifo',
    queueTarget: '5s',
  })
  const { started, admit, release } = recorder()
  admit(shedder, 'a')
  time.runUntil(1)
  for (const id of ['b', 'c', 'd']) admit(shedder, id)
  time.runUntil(50)
  release('a') // the line has stood 49 ms: still a burst, so the oldest starts
  expect(started).toEqual(['a', 'b'])
  time.runUntil(60)
  admit(shedder, 'e')
  time.runUntil(200)
  // The line has not emptied since 1 ms: a standing queue, served newest first.
  for (const id of ['b', 'e', 'd']) release(id)
  expect(started).toEqual(['a', 'b', 'e', 'd', 'c'])
})

test('in a standing queue a request waits the short bound at most; a burst may wait its full maxWait', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 1, queue: 10, maxWait: '1s' })
  const { started, shed, admit, release } = recorder()
  admit(shedder, 'warm')
  time.runUntil(4)
  release('warm') // one request has finished: the shedder knows a slot is held about 4 ms
  admit(shedder, 'a')
  time.runUntil(5)
  admit(shedder, 'b')
  time.runUntil(90)
  release('a') // b waited 85 ms: the line has not stood for the 100 ms interval, so that is a burst
  expect(started).toEqual(['warm', 'a', 'b'])
  admit(shedder, 'c')
  time.runUntil(99)
  // The line (c) filled at 90 ms stands from 190 ms; from then c may wait max(5 ms, 2 x mean hold) at most.
  time.runUntil(189)
  expect(shed).toEqual([])
  time.runUntil(190)
  expect(shed).toEqual(['c'])
})

test('with an adaptive ceiling, the limit starts low and rises while latency holds', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 64, adaptive: true })
  expect(shedder.limit).toBe(4)
  // A service whose latency does not depend on load: every window that reaches the ceiling doubles it.
  for (let round = 0; round < 40; round++) {
    const tickets = Array.from({ length: shedder.limit + 1 }, () => shedder.admit())
    time.runUntil(time.now() + 10)
    for (const ticket of tickets) ticket.release()
  }
  expect(shedder.limit).toBe(64)
})
