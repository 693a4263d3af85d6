// The shedder's mechanics, one rule at a time, on virtual time (the same VirtualTime the overload experiments use):
// every instant below is exact.
import { createShedder, type ShedderOptions, type Ticket } from '@sluice/core'
import { VirtualTime } from '../../../../examples/overload/virtual-time'
import { ControlledDelay } from '../../src/protect/controlled-delay'
import type { EventLoopDelay } from '../../src/protect/event-loop-delay'
import { ShedderCore } from '../../src/protect/shedder-core'

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

test('light tenants that arrive in the same instant wait their turn; only the heavy tenant has a standing queue', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 1, queue: 10, maxWait: '1s' })
  const { started, shed, admit, release } = recorder()
  admit(shedder, 'big1', { tenant: 'big' })
  time.runUntil(10)
  release('big1') // a slot is held 10 ms: a standing queue's waiters may wait 20 ms
  admit(shedder, 'big2', { tenant: 'big' })
  for (const id of ['big3', 'big4']) admit(shedder, id, { tenant: 'big' })
  // Five small tenants fire in the same instant, one request each, and wait behind each other.
  const small = ['a', 'b', 'c', 'd', 'e']
  for (const id of small) admit(shedder, id, { tenant: id })
  time.runUntil(109)
  expect(shed).toEqual([])
  time.runUntil(110)
  // The queues have not emptied for the 100 ms interval: the big tenant's stands, and its waiters are past 20 ms. The
  // small tenants have started nothing lately: theirs wait up to maxWait (before, they were shed here too).
  expect(shed).toEqual(['big3', 'big4'])
  time.runUntil(400)
  expect(shed).toEqual(['big3', 'big4'])
  release('big2')
  for (const id of small.slice(0, -1)) release(id)
  expect(started).toEqual(['big1', 'big2', ...small])
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

test("a waiter's decided() settles when it starts; a request that started at once is decided already", async () => {
  const { shedder } = shedderAt({ maxInFlight: 1, queue: 1, maxWait: '1s' })
  const running = shedder.admit()
  expect((await running.decided()).state).toBe('running')
  const waiter = shedder.admit()
  let settled = false
  const decided = waiter.decided().then((ticket) => {
    settled = true
    return ticket
  })
  await new Promise((resolve) => setImmediate(resolve))
  expect(settled).toBe(false)
  running.release()
  expect((await decided).state).toBe('running')
})

test('how long a request waited runs from its arrival to its start', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 1, queue: 1, maxWait: '1s' })
  const first = shedder.admit()
  time.runUntil(30)
  const second = shedder.admit()
  time.runUntil(100)
  first.release()
  expect([second.state, second.waitedMs, first.waitedMs]).toEqual(['running', 70, 0])
})

test('without a tenant every request is in one tenant, named ""', () => {
  const { shedder } = shedderAt({ maxInFlight: 1 })
  expect(shedder.admit().tenant).toBe('')
})

test('among tenants as far below their share, the one whose oldest waiter came first starts first', () => {
  const { shedder } = shedderAt({ maxInFlight: 1, queue: 5, maxWait: '1s' })
  const { started, admit, release } = recorder()
  admit(shedder, 'x', { tenant: 'x' })
  admit(shedder, 'b1', { tenant: 'b' })
  admit(shedder, 'a1', { tenant: 'a' })
  admit(shedder, 'b2', { tenant: 'b' })
  release('b1') // b's oldest waiter is now b2, who came after a1
  release('x')
  admit(shedder, 'c1', { tenant: 'c' })
  release('a1')
  expect(started).toEqual(['x', 'a1', 'b2'])
})

test("a tenant's finished requests stop counting against its share", () => {
  const { shedder } = shedderAt({ maxInFlight: 2, queue: 4, maxWait: '1s' })
  const { started, admit, release } = recorder()
  admit(shedder, 'x1', { tenant: 'x' })
  admit(shedder, 'y1', { tenant: 'y' })
  admit(shedder, 'y2', { tenant: 'y' })
  admit(shedder, 'x2', { tenant: 'x' })
  release('x1') // x has none in flight now, y one: x2 starts before y2, who came first
  expect(started).toEqual(['x1', 'y1', 'x2'])
})

test("a full line counts a tenant's places as they are now: waiters that left free theirs", () => {
  const { shedder } = shedderAt({ maxInFlight: 1, queue: 4, maxWait: '1s' })
  const { shed, admit, release } = recorder()
  admit(shedder, 'z', { tenant: 'z' })
  for (const id of ['x1', 'x2', 'x3', 'x4']) admit(shedder, id, { tenant: 'x' })
  release('x1') // x now waits with 3
  admit(shedder, 'y1', { tenant: 'y' })
  // The line is full; x uses 3 places and y 1 (2 with the arrival): x's newest gives way.
  admit(shedder, 'y2', { tenant: 'y' })
  expect(shed).toEqual(['x4'])
  // Now x uses 2 and y 2: y3 would only move the excess, so it is shed.
  admit(shedder, 'y3', { tenant: 'y' })
  expect(shed).toEqual(['x4', 'y3'])
})

test('critical work waits beyond the line only for the slots that less important work holds now', () => {
  const { shedder } = shedderAt({ maxInFlight: 2, queue: 1, maxWait: '1s' })
  const { shed, admit, release } = recorder()
  admit(shedder, 'c0', { priority: 'critical' })
  release('c0') // a critical request that has finished holds nothing
  admit(shedder, 'c1', { priority: 'critical' })
  admit(shedder, 'n1')
  admit(shedder, 'c2', { priority: 'critical' }) // the line's one place
  admit(shedder, 'c3', { priority: 'critical' }) // beyond it, for n1's slot
  admit(shedder, 'c4', { priority: 'critical' })
  expect(shed).toEqual(['c4'])
  // A critical waiter that leaves frees its place beyond the line.
  release('c3')
  admit(shedder, 'c5', { priority: 'critical' })
  expect(shed).toEqual(['c4'])
  expect(shedder.waiting).toBe(2)
})

test('less important work is refused for exactly one interval after a more important request was shed', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 1, queue: 1, maxWait: '1s' })
  const { shed, admit, release } = recorder()
  admit(shedder, 'n1')
  admit(shedder, 'n2')
  admit(shedder, 'n3') // shed at 0 ms
  time.runUntil(50)
  release('n1')
  time.runUntil(99)
  admit(shedder, 's1', { priority: 'sheddable' })
  time.runUntil(100)
  expect(admit(shedder, 's2', { priority: 'sheddable' }).state).toBe('waiting')
  expect(shed).toEqual(['n3', 's1'])
})

test('a standing queue waits two mean hold times per slot at most; critical waiters keep their full maxWait', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 2, queue: 10, maxWait: '1s' })
  const { shed, admit, release } = recorder()
  admit(shedder, 'w1')
  time.runUntil(400)
  release('w1') // held 400 ms
  admit(shedder, 'w2')
  time.runUntil(480)
  release('w2') // held 80 ms: the mean hold is 400 + (80 - 400) / 32 = 390 ms
  admit(shedder, 'r1')
  admit(shedder, 'r2')
  const normal = admit(shedder, 'n')
  const critical = admit(shedder, 'c', { priority: 'critical' })
  // Standing from 580 ms; the bound is then 2 x 390 / 2 slots = 390 ms after arrival.
  time.runUntil(869)
  expect(shed).toEqual([])
  time.runUntil(870)
  expect(shed).toEqual(['n'])
  expect([normal.reason, normal.waitedMs]).toEqual(['standing-queue', 390])
  time.runUntil(1479)
  expect(critical.state).toBe('waiting')
  time.runUntil(1480)
  expect([critical.state, critical.reason, critical.waitedMs]).toEqual(['shed', 'deadline', 1000])
})

test('when the adaptive ceiling rises, waiters start in the new slots at once', () => {
  const { shedder } = shedderAt({ maxInFlight: 64, adaptive: true, maxWait: '10s' })
  const tickets = Array.from({ length: 24 }, () => shedder.admit())
  expect([shedder.inFlight, shedder.waiting]).toEqual([4, 20])
  // Each release starts a waiter; the 20th closes a window in which the ceiling bound, and doubles it.
  for (const ticket of tickets.slice(0, 20)) ticket.release()
  expect([shedder.limit, shedder.inFlight, shedder.waiting]).toEqual([8, 4, 0])
})

test.each([
  ['fifo (the default)', {}, ['a', 'b', 'c', 'd', 'e']],
  ['adaptive-lifo', { queueOrder: 'adaptive-lifo' as const }, ['a', 'b', 'e', 'd', 'c']],
])('order of a standing queue, %s', (_name, order, expected) => {
  const { time, shedder } = shedderAt({ maxInFlight: 1, queue: 10, maxWait: '10s', queueTarget: '5s', ...order })
  const { started, admit, release } = recorder()
  admit(shedder, 'a')
  time.runUntil(1)
  for (const id of ['b', 'c', 'd']) admit(shedder, id)
  time.runUntil(50)
  release('a')
  time.runUntil(60)
  admit(shedder, 'e')
  time.runUntil(200)
  // Each release ends the request that started last, which starts the next.
  for (let i = 1; i < 5; i++) release(started[i] as string)
  expect(started).toEqual(expected)
})

test('a waiter shed at its deadline takes every less important waiter with it: they would wait longer still', () => {
  const { time, shedder } = shedderAt({ maxInFlight: 1, queue: 5, maxWait: '1s' })
  const { shed, admit } = recorder()
  admit(shedder, 'r')
  const normal = admit(shedder, 'n')
  time.runUntil(10)
  const sheddable = admit(shedder, 's', { priority: 'sheddable' })
  const critical = admit(shedder, 'c', { priority: 'critical' })
  time.runUntil(1000)
  expect(shed).toEqual(['s', 'n'])
  expect([normal.reason, sheddable.reason, sheddable.waitedMs]).toEqual(['deadline', 'deadline', 990])
  expect(critical.state).toBe('waiting')
})

test('a full line drops a waiter of a less important priority: of the tenant using the most places, however few', () => {
  const lone = shedderAt({ maxInFlight: 1, queue: 1, maxWait: '1s' }).shedder
  const { shed, admit } = recorder()
  admit(lone, 'r', { tenant: 'a' })
  admit(lone, 'y1', { tenant: 'y', priority: 'sheddable' })
  admit(lone, 'n1', { tenant: 'a' })
  expect(shed).toEqual(['y1'])
  const { shedder } = shedderAt({ maxInFlight: 1, queue: 3, maxWait: '1s' })
  const second = recorder()
  second.admit(shedder, 'r', { tenant: 'a' })
  second.admit(shedder, 'x1', { tenant: 'x', priority: 'sheddable' })
  second.admit(shedder, 'x2', { tenant: 'x', priority: 'sheddable' })
  second.admit(shedder, 'y1', { tenant: 'y', priority: 'sheddable' })
  second.admit(shedder, 'n1', { tenant: 'a' })
  expect(second.shed).toEqual(['x2'])
})

test('at one priority a tenant gives way only to one using at least two places fewer', () => {
  const { shedder } = shedderAt({ maxInFlight: 1, queue: 5, maxWait: '1s' })
  const { shed, admit } = recorder()
  admit(shedder, 'z', { tenant: 'z' })
  for (const id of ['x1', 'x2', 'x3']) admit(shedder, id, { tenant: 'x' })
  for (const id of ['y1', 'y2']) admit(shedder, id, { tenant: 'y' })
  // x uses 3 places, y 2: giving y3 one of x's would leave y with 3 and x with 2, no fairer.
  admit(shedder, 'y3', { tenant: 'y' })
  expect(shed).toEqual(['y3'])
  admit(shedder, 'w1', { tenant: 'w' })
  expect(shed).toEqual(['y3', 'x3'])
})

describe('shedding on event-loop delay (a signal the test sets)', () => {
  function laggingShedder() {
    const time = new VirtualTime()
    const signal = { lagMs: 0, read: () => signal.lagMs }
    const shedder = new ShedderCore({
      maxInFlight: 1,
      queue: 5,
      maxWaitMs: 1000,
      delay: new ControlledDelay(5, 100),
      newestFirst: false,
      retryAfterMs: 1000,
      timers: time,
      adaptive: undefined,
      lag: { signal: signal as unknown as EventLoopDelay, maxMs: 50 },
    })
    return { time, signal, shedder }
  }

  test('sheds all but critical work while the loop lags more than the maximum, not at it', () => {
    const { signal, shedder } = laggingShedder()
    signal.lagMs = 50
    const atMax = shedder.admit()
    expect(atMax.state).toBe('running')
    atMax.release()
    signal.lagMs = 51
    const normal = shedder.admit()
    expect([normal.state, normal.reason]).toEqual(['shed', 'event-loop'])
    expect(shedder.admit({ priority: 'critical' }).state).toBe('running')
  })

  test('a normal request shed for lag sheds the less important waiters when a slot frees, for an interval', () => {
    const { time, signal, shedder } = laggingShedder()
    const { started, shed, admit, release } = recorder()
    admit(shedder, 'n1')
    admit(shedder, 's1', { priority: 'sheddable' })
    admit(shedder, 's2', { priority: 'sheddable' })
    time.runUntil(10)
    signal.lagMs = 100
    admit(shedder, 'n2')
    signal.lagMs = 0
    release('n1')
    expect(shed).toEqual(['n2', 's1', 's2'])
    expect(started).toEqual(['n1'])
    time.runUntil(110)
    expect(admit(shedder, 's3', { priority: 'sheddable' }).state).toBe('running')
  })
})
