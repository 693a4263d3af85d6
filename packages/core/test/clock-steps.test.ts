// Issue 25 item 6: a clock stepped back one hour and forward again let twice the limit through on the MemoryStore, for
// every algorithm (limit 5 a minute: 5 admitted at T, 0 at T - 1 h and T - 1 h + 10 s, then 5 more at T + 10 s). A
// key's time never runs backwards: the store decides by the later of the clock and the key's own last instant, and
// while the clock is behind the key, the key's time moves on as the clock does (no lockout for the length of the
// step); once the clock is back past the key's instant, the clock decides again. Redis gives the same answers
// (test/redis/clock-steps.test.ts).
import { type AlgorithmName, createLimiter, type Limiter, MemoryStore } from '@sluice/core'

const LIMIT = 5
const WINDOW_MS = 60_000
const HOUR_MS = 3_600_000
// Half way through a minute, so that T + 10 s is in T's fixed window.
const T = Math.floor(1_700_000_000_000 / WINDOW_MS) * WINDOW_MS + 30_000

type Case = AlgorithmName | 'leaky-queue'
const CASES: readonly Case[] = [
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'token-bucket',
  'leaky-bucket',
  'leaky-queue',
]

function clientOf(algorithm: Case) {
  const clock = { now: T }
  const limiter = createLimiter({
    algorithm: algorithm === 'leaky-queue' ? 'leaky-bucket' : algorithm,
    limit: LIMIT,
    window: WINDOW_MS,
    store: new MemoryStore({ clock: () => clock.now }),
  })
  // The queue is the leaky bucket behind schedule(); enqueue() is schedule() without the wait.
  const send = () => (algorithm === 'leaky-queue' ? limiter.enqueue('client') : limiter.consume('client'))
  return { send, clock }
}

/** How many of `n` requests at the client's present instant are admitted. */
async function admittedOf(send: () => ReturnType<Limiter['consume']>, n: number): Promise<number> {
  let admitted = 0
  for (let i = 0; i < n; i++) if ((await send()).allowed) admitted++
  return admitted
}

describe.each(CASES)('%s, limit 5 a minute', (algorithm) => {
  test('a clock stepped back one hour and forward again does not let twice the limit through', async () => {
    const { send, clock } = clientOf(algorithm)
    expect(await admittedOf(send, LIMIT)).toBe(LIMIT)
    clock.now = T - HOUR_MS
    const back = await admittedOf(send, LIMIT)
    clock.now = T - HOUR_MS + 10_000
    const backLater = await admittedOf(send, LIMIT)
    clock.now = T + 10_000
    const forwardAgain = await admittedOf(send, LIMIT)
    // A bucket or queue of 5 a minute gains one place every 12 s: none 10 s after T.
    expect([back, backLater, forwardAgain]).toEqual([0, 0, 0])
    // And the key goes on from T: a minute after T, a window later, it is admitted again.
    clock.now = T + WINDOW_MS
    expect((await send()).allowed).toBe(true)
  })

  test('a clock stepped back one hour, forward again, then back again, never admits more than the rate', async () => {
    const { send, clock } = clientOf(algorithm)
    expect(await admittedOf(send, LIMIT)).toBe(LIMIT)
    let admitted = 0
    for (const at of [T - HOUR_MS, T + 5_000, T - HOUR_MS + 8_000, T + 9_000]) {
      clock.now = at
      admitted += await admittedOf(send, LIMIT)
    }
    expect(admitted).toBe(0)
  })
})

describe('stacked rules through createLimiter', () => {
  test('a clock stepped back one hour and forward again does not let twice the stack through', async () => {
    const clock = { now: T }
    const limiter = createLimiter({
      store: new MemoryStore({ clock: () => clock.now }),
      rules: [
        { name: 'fixed', algorithm: 'fixed-window', limit: LIMIT, window: WINDOW_MS },
        { name: 'sliding', algorithm: 'sliding-window', limit: LIMIT + 1, window: WINDOW_MS },
        { name: 'log', algorithm: 'sliding-log', limit: LIMIT + 2, window: WINDOW_MS },
        { name: 'tokens', algorithm: 'token-bucket', limit: LIMIT + 3, window: WINDOW_MS },
        { name: 'meter', algorithm: 'leaky-bucket', limit: LIMIT + 4, window: WINDOW_MS },
      ],
    })
    const keys = ['user', 'user', 'user', 'user', 'user']
    const send = () => limiter.consume(keys)
    expect(await admittedOf(send, LIMIT)).toBe(LIMIT)
    clock.now = T - HOUR_MS
    const back = await admittedOf(send, LIMIT)
    clock.now = T - HOUR_MS + 10_000
    const backLater = await admittedOf(send, LIMIT)
    clock.now = T + 10_000
    const forwardAgain = await admittedOf(send, LIMIT)
    expect([back, backLater, forwardAgain]).toEqual([0, 0, 0])
  })

  test('a clock stepped back one hour does not lock the stack out past one window', async () => {
    const clock = { now: T }
    const limiter = createLimiter({
      store: new MemoryStore({ clock: () => clock.now }),
      rules: [
        { name: 'fixed', algorithm: 'fixed-window', limit: LIMIT, window: WINDOW_MS },
        { name: 'tokens', algorithm: 'token-bucket', limit: LIMIT, window: WINDOW_MS },
        { name: 'log', algorithm: 'sliding-log', limit: LIMIT, window: WINDOW_MS },
      ],
    })
    const send = () => limiter.consume(['user', 'user', 'user'])
    expect(await admittedOf(send, LIMIT)).toBe(LIMIT)
    clock.now = T - HOUR_MS
    const steppedAt = clock.now
    let decision = await send()
    while (!decision.allowed && clock.now - steppedAt <= 2 * HOUR_MS) {
      clock.now += Math.max(1, decision.retryAfterMs)
      decision = await send()
    }
    expect(decision.allowed).toBe(true)
    expect(clock.now - steppedAt).toBeLessThanOrEqual(WINDOW_MS)
  })
})
