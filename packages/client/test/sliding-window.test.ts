import { originKey, PerKey, SlidingCount } from '../src/sliding-window'

describe('SlidingCount', () => {
  it('counts the events of the last window and lets older ones go, slice by slice', () => {
    const count = new SlidingCount(1000, 10)
    count.add(0)
    count.add(50)
    count.add(450)
    expect(count.count(450)).toBe(3)
    // The slice [0, 100) leaves the window when time reaches 1000.
    expect(count.count(999)).toBe(3)
    expect(count.count(1000)).toBe(1)
    // The window is the current slice and the nine before it: at 1400, [400, 500) has left.
    expect(count.count(1399)).toBe(1)
    expect(count.count(1400)).toBe(0)
  })

  it('is empty, exactly, after a gap longer than the window', () => {
    const count = new SlidingCount(1000, 10)
    for (let t = 0; t < 1000; t += 7) count.add(t)
    expect(count.count(999)).toBe(143)
    expect(count.count(50_000)).toBe(0)
    count.add(50_000)
    expect(count.count(50_000)).toBe(1)
  })

  it('counts between the last 99% and 100% of the window, under irregular arrivals', () => {
    const count = new SlidingCount(1000, 100)
    const times: number[] = []
    // The first event inside the last 990 ms and inside the last 1000 ms: the exact counts that bound ours.
    let inner = 0
    let outer = 0
    const outside: [number, number, number][] = []
    let t = 0
    for (let i = 0; i < 3000; i++) {
      t += (i * 7919) % 23
      count.add(t)
      times.push(t)
      while (times[inner]! <= t - 990) inner++
      while (times[outer]! <= t - 1000) outer++
      const counted = count.count(t)
      if (counted < times.length - inner || counted > times.length - outer) outside.push([t, counted, inner])
    }
    expect(outside).toEqual([])
    expect(count.count(t)).toBeGreaterThan(50)
  })

  it('keeps counting when the clock steps back', () => {
    const count = new SlidingCount(1000, 10)
    count.add(5000)
    count.add(4950)
    count.add(1000)
    expect(count.count(5000)).toBe(3)
  })
})

describe('originKey', () => {
  it('keys a URL by its origin and any other string by itself', () => {
    expect(originKey('https://api.example.com:8443/v1/things?x=1')).toBe('https://api.example.com:8443')
    expect(originKey(new URL('http://127.0.0.1:3000/a'))).toBe('http://127.0.0.1:3000')
    expect(originKey('payments-db')).toBe('payments-db')
  })
})

describe('PerKey', () => {
  it('forgets a key idle for longer than its idle time, so many origins do not add up', () => {
    let made = 0
    const states = new PerKey(1000, 100_000, () => ({ made: ++made }))
    for (let i = 0; i < 10_000; i++) states.get(`https://host-${i}.example`, i / 100)
    expect(states.size).toBe(10_000)
    const kept = states.get('https://host-9999.example', 1050)
    expect(kept.made).toBe(10_000)
    // Every key last used at 50 ms or before is gone; the rest stay until they too are idle for 1 s.
    expect(states.size).toBe(4_999)
    states.get('fresh', 5000)
    expect(states.size).toBe(1)
  })

  it('holds at most maxKeys, forgetting the least recently used, when many keys are used within the idle time', () => {
    let made = 0
    const states = new PerKey(60_000, 3, () => ({ made: ++made }))
    for (const key of ['a', 'b', 'c']) states.get(key, 0)
    states.get('a', 1) // used again: now 'b' is the least recent
    states.get('d', 2)
    expect(states.size).toBe(3)
    expect(states.get('a', 3).made).toBe(1) // kept
    expect(states.get('b', 4).made).toBe(5) // forgotten, made anew
  })
})
