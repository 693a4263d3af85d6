import { CallExpired, Deadlines } from '../src/deadlines'

beforeEach(() => jest.useFakeTimers())
afterEach(() => jest.useRealTimers())

/** A call that settles only when told to. */
function pending<T = string>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve!: (value: T) => void
  let reject!: (error: Error) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/**
 * Deadlines on a fake idle clock: `wait` passes time with the instance idle, `busy` with it running code (turn after
 * turn), `hold` with it stuck in one synchronous run (the clock moves, no timer fires until the next turn).
 */
function clocked(timeoutMs = 100, backstopMs = 3000) {
  let idleMs = 0
  let heldMs = 0
  const nowMs = () => performance.now() + heldMs
  const deadlines = new Deadlines({ timeoutMs, backstopMs, idleMs: () => idleMs, nowMs })
  return {
    deadlines,
    hold(ms: number) {
      heldMs += ms
    },
    async wait(ms: number) {
      for (let i = 0; i < ms; i++) {
        idleMs += 1
        await jest.advanceTimersByTimeAsync(1)
      }
    },
    async busy(ms: number) {
      await jest.advanceTimersByTimeAsync(ms)
    },
  }
}

/** What a call ended with: 'ok <value>', or the error's message and reach. */
function outcome(promise: Promise<unknown>): { result?: string } {
  const seen: { result?: string } = {}
  promise.then(
    (value) => {
      seen.result = `ok ${String(value)}`
    },
    (error: Error) => {
      seen.result = error instanceof CallExpired ? `${error.reach}: ${error.message}` : error.message
    },
  )
  return seen
}

test('a call that Redis leaves unanswered while the instance is idle is given up at the timeout: the node is silent', async () => {
  const { deadlines, wait } = clocked()
  const call = outcome(deadlines.run(() => pending().promise))
  await wait(99)
  expect(call.result).toBeUndefined()
  await wait(2)
  expect(call.result).toBe('node: Redis did not answer within 100 ms')
})

test('time the instance spends busy does not count: the call waits for Redis, not for this instance', async () => {
  const { deadlines, wait, busy } = clocked()
  const reply = pending()
  const call = outcome(deadlines.run(() => reply.promise))
  await wait(60)
  await busy(250) // a long handler, a GC pause, a burst being dispatched
  expect(call.result).toBeUndefined()
  reply.resolve('read after the pause')
  await wait(1)
  expect(call.result).toBe('ok read after the pause')
})

test('while replies keep coming, the oldest call waits its turn: a backlog is a queue, not an outage', async () => {
  const { deadlines, wait } = clocked()
  const replies = Array.from({ length: 60 }, () => pending())
  const calls = replies.map((reply) => outcome(deadlines.run(() => reply.promise)))
  // Redis answers one call every 40 ms: the last one waits 2.4 s, yet the connection is never silent for 100 ms.
  for (const [i, reply] of replies.entries()) {
    await wait(40)
    reply.resolve(String(i))
  }
  await wait(1)
  expect(calls.map((c) => c.result)).toEqual(replies.map((_, i) => `ok ${i}`))
})

test('a call sent again (NOSCRIPT, then the script) queues anew: the calls sent before it do not overtake it', async () => {
  const { deadlines, wait } = clocked()
  const reloads = [pending(), pending()]
  const others = [pending(), pending()]
  const calls = reloads.map((reload, i) => {
    let resent!: () => void
    const call = outcome(
      deadlines.run((onResent) => {
        resent = onResent
        return reload.promise
      }),
    )
    const other = outcome(deadlines.run(() => (others[i] as ReturnType<typeof pending>).promise))
    return { call, other, resend: () => resent() }
  })
  const [answered, silent] = calls as [(typeof calls)[0], (typeof calls)[0]]
  await wait(90)
  answered.resend() // NOSCRIPT arrived; the script goes out behind the other calls
  silent.resend()
  await wait(60)
  for (const other of others) other.resolve('other') // answered before the reloads, in order
  await wait(95)
  expect(answered.call.result).toBeUndefined() // next in line, 95 ms after the last reply
  reloads[0]?.resolve('loaded')
  await wait(110)
  expect(answered.call.result).toBe('ok loaded')
  // The second reload never comes: the connection is silent, which concerns the node, not one call.
  expect(silent.call.result).toBe('node: Redis did not answer within 100 ms')
})

test('a call overtaken by later ones is given up alone, as a slot condition, counting from when it was overtaken', async () => {
  const { deadlines, wait } = clocked()
  const stuck = outcome(deadlines.run(() => pending().promise)) // the client is retrying it (TRYAGAIN, a redirection)
  const answered = pending()
  const later = pending()
  const second = outcome(deadlines.run(() => answered.promise))
  await wait(50)
  answered.resolve('second') // overtakes the first call
  const third = outcome(deadlines.run(() => later.promise))
  await wait(50)
  later.resolve('third')
  await wait(48)
  expect(stuck.result).toBeUndefined() // 100 ms after the call was sent, but not yet 100 ms after it was overtaken
  await wait(5)
  expect(stuck.result).toBe('slot: Redis answered later calls but not this one within 100 ms')
  expect([second.result, third.result]).toEqual(['ok second', 'ok third'])
})

test('the backstop: no call waits longer than backstopMs of idle time, however steadily the calls ahead are answered', async () => {
  const { deadlines, wait } = clocked(100, 1000)
  const replies = Array.from({ length: 30 }, () => pending())
  const calls = replies.map((reply) => outcome(deadlines.run(() => reply.promise)))
  // One reply every 40 ms, in order: the connection is never silent, but the calls at the back wait over 1000 ms.
  for (const [i, reply] of replies.entries()) {
    await wait(40)
    reply.resolve(String(i))
  }
  await wait(1)
  expect(calls.slice(0, 24).map((c) => c.result)).toEqual(replies.slice(0, 24).map((_, i) => `ok ${i}`))
  for (const call of calls.slice(26)) {
    expect(call.result).toBe('node: Redis took over 1000 ms to answer while answering other calls')
  }
})

test('an instance too busy ever to be idle still gives up on a connection silent for backstopMs by the clock', async () => {
  const { deadlines, busy } = clocked(100, 1000)
  const call = outcome(deadlines.run(() => pending().promise))
  await busy(999)
  expect(call.result).toBeUndefined()
  await busy(2)
  expect(call.result).toBe('node: Redis did not answer within 1000 ms, while this instance was too busy to be idle')
})

test('regression: a synchronous run longer than the backstop (a burst dispatched at once) is not a silent Redis', async () => {
  // 20,000 consumes made in one run held the loop for 3.4 s on a loaded machine; node-redis writes in setImmediate, so
  // Redis had not even seen the first call when the deadline was examined, and a healthy Redis was declared down.
  const { deadlines, hold, busy } = clocked(100, 1000)
  const reply = pending()
  const call = outcome(deadlines.run(() => reply.promise))
  hold(3500)
  await busy(100) // the loop turns: the timer fires 3.4 s late, and Redis has not answered yet
  expect(call.result).toBeUndefined()
  reply.resolve('answered on the next turns')
  await busy(1)
  expect(call.result).toBe('ok answered on the next turns')
})

test('regression: a run that holds the loop between the deadline timer and its check is not silence either', async () => {
  // The timer fired, then the poll phase handed the reply of the call before (a warm-up) to code that dispatched a
  // 20,000-call burst in one 5.5 s run, then the deadlines were checked: the replies of that burst had arrived, unread.
  const { deadlines, hold, busy } = clocked(100, 1000)
  const reply = pending()
  const call = outcome(deadlines.run(() => reply.promise))
  setTimeout(() => hold(5500), 100) // runs after the deadline timer due at 100 ms, before its check
  await busy(100)
  expect(call.result).toBeUndefined()
  reply.resolve('read on the next turn')
  await busy(1)
  expect(call.result).toBe('ok read on the next turn')
})

test('after the loop was held, a Redis that stays silent is still given up: the held time alone is left out', async () => {
  const { deadlines, hold, busy } = clocked(100, 1000)
  const call = outcome(deadlines.run(() => pending().promise))
  hold(3500) // past the timer due at 100 ms: 3.5 s the clock counts for nothing
  await busy(999) // then the loop turns, never idle
  expect(call.result).toBeUndefined()
  await busy(3) // the held 3.5 s, and the 1 ms the fake timers take from the timer to its check, are left out
  expect(call.result).toBe('node: Redis did not answer within 1000 ms, while this instance was too busy to be idle')
})

test('resent answers whether the call is still waited for; its whole wait, resends included, meets the backstop', async () => {
  const { deadlines, wait } = clocked(100, 1000)
  let resent!: () => boolean
  const reply = pending()
  const call = outcome(
    deadlines.run((onResent) => {
      resent = onResent
      return reply.promise
    }),
  )
  // Redis refuses it as late every 90 ms (a reply each time), and it is sent again: still waited for, until the
  // backstop of its whole wait.
  const answers: boolean[] = []
  for (let i = 0; i < 12; i++) {
    await wait(90)
    answers.push(resent())
  }
  expect(answers.slice(0, 11)).toEqual(Array(11).fill(true))
  expect(answers[11]).toBe(false)
  expect(call.result).toBe('node: Redis took over 1000 ms to answer while answering other calls')
})

test('a reply or an error after the deadline is absorbed, and an error in time is the caller’s', async () => {
  const { deadlines, wait } = clocked()
  const failing = pending()
  const late = pending()
  const first = outcome(deadlines.run(() => failing.promise))
  const second = outcome(deadlines.run(() => late.promise))
  failing.reject(new Error('READONLY'))
  await wait(101)
  late.resolve('too late') // after the deadline: changes nothing and is not unhandled
  await wait(1)
  expect([first.result, second.result]).toEqual(['READONLY', 'node: Redis did not answer within 100 ms'])
})

test('failAll gives up every call still waiting, at once', async () => {
  const { deadlines, wait } = clocked()
  const calls = [outcome(deadlines.run(() => pending().promise)), outcome(deadlines.run(() => pending().promise))]
  deadlines.failAll(new Error('connect ECONNREFUSED'))
  await wait(1)
  expect(calls.map((c) => c.result)).toEqual(['connect ECONNREFUSED', 'connect ECONNREFUSED'])
})

test('ten thousand calls that settle in time set about one timer per timeout, not one each', async () => {
  const { deadlines, wait } = clocked()
  const spy = jest.spyOn(global, 'setTimeout')
  for (let ms = 0; ms < 1000; ms++) {
    const calls = Array.from({ length: 10 }, () => deadlines.run(() => Promise.resolve(ms)))
    await Promise.all(calls)
    await wait(1)
  }
  // One timer when the first call starts, then at most one more each time it fires (every ~100 ms).
  expect(spy.mock.calls.length).toBeLessThanOrEqual(12)
  spy.mockRestore()
  // Once nothing waits, the timer stops: nothing is left to keep a process alive or to fire.
  await wait(200)
  expect(jest.getTimerCount()).toBe(0)
})
