// Goodput, latency, fairness and priorities under overload, measured on virtual time: a discrete-event simulation
// drives the real core shedder (the object shedLoad calls in every adapter) against a dependency of 10 x 100 ms
// (100/s) with an unbounded FIFO, offered open-loop Poisson traffic by clients that give up after 2 s. Virtual time
// makes the figures exact and the same on every run, whatever else the machine is doing; the HTTP suites prove
// that each adapter wires this shedder in.
// The experiments run once, as `npm run demo:overload` runs them; each test checks its part of that report.
import { overloadChart } from '../../examples/overload/chart'
import { findings, goodputTable, neighbourTable, type Report, runExperiments } from '../../examples/overload/report'
import { ARRIVAL_PATTERNS, CAPACITY, PATIENCE_MS, priorityMix, stepReaction } from '../../examples/overload/scenarios'
import { simulate } from '../../examples/overload/simulation'

const figures: string[] = []
let report: Report
beforeAll(async () => {
  report = await runExperiments()
}, 60_000)
afterAll(() => console.log(`overload figures:\n${figures.join('\n')}`))

describe('goodput under overload: a collapse without shedding, capacity kept with shedLoad({ maxInFlight: 10 })', () => {
  test.each([
    [1.5, 0.95, 2],
    [2, 0.95, 2],
    [4, 0.9, 3],
    [10, 0.8, 3],
  ])('at %fx capacity: goodput >= %f of capacity, admitted p99 within %fx of unloaded', (multiple, share, p99) => {
    const row = report.goodput.find((r) => r.multiple === multiple)
    if (row === undefined) throw new Error(`no run at ${multiple}x`)
    const unloaded = report.unloadedP99Ms
    figures.push(
      `  ${multiple}x: goodput ${row.without.goodput.toFixed(1)}/s without, ${row.with.goodput.toFixed(1)}/s with; ` +
        `p99 ${row.with.p99Ms.toFixed(0)} ms = ${(row.with.p99Ms / unloaded).toFixed(2)}x unloaded (${unloaded.toFixed(0)} ms)`,
    )
    expect(row.without.goodput).toBeLessThan(0.2 * CAPACITY)
    expect(row.with.goodput).toBeGreaterThanOrEqual(share * CAPACITY)
    expect(row.with.p99Ms).toBeLessThanOrEqual(p99 * unloaded)
  })
})

test('reaction without flapping: a step from 0.5x to 3x and back', async () => {
  for (const seed of [1, 2, 3]) {
    // Seed 1 is the demo's run; two more draws of the arrivals show it is not one lucky sequence.
    const reaction = seed === 1 ? report.reaction : await stepReaction(seed)
    figures.push(
      `  step (seed ${seed}): first 503 after ${reaction.firstShedMs.toFixed(0)} ms, settled within ${reaction.settledMs} ms ` +
        `at ${reaction.steadyShedRate.toFixed(2)}, last 503 ${reaction.lastShedAfterDropMs.toFixed(0)} ms after the drop`,
    )
    expect(reaction.firstShedMs).toBeLessThanOrEqual(100)
    expect(reaction.settledMs).toBeLessThanOrEqual(2000)
    // At 3x, two requests in three cannot be served: the shed rate is that, not more (capacity left idle) or less.
    expect(reaction.steadyShedRate).toBeGreaterThan(0.6)
    expect(reaction.steadyShedRate).toBeLessThan(0.72)
    expect(reaction.lastShedAfterDropMs).toBeLessThanOrEqual(1000)
  }
})

describe('the noisy neighbour: 30 tenants at 1/s are served in time while one at 200/s takes the rest', () => {
  // Before the fix, the small tenants of the in-step run were shed as standing queues after 100 ms (each holding one
  // waiter behind the others of the same instant): 33% of them served, two in three of the tenants never.
  test.each(ARRIVAL_PATTERNS.map((pattern) => [pattern]))('small tenants arriving %s', (pattern) => {
    const result = report.neighbours.find((n) => n.pattern === pattern)
    if (result === undefined) throw new Error(`no run for ${pattern}`)
    figures.push(
      `  noisy neighbour (${pattern}): worst small tenant ${(result.worstSmallTenantServed * 100).toFixed(1)}% served, ` +
        `big tenant ${result.bigGoodput.toFixed(1)}/s, total ${result.totalGoodput.toFixed(1)}/s`,
    )
    expect(result.worstSmallTenantServed).toBeGreaterThanOrEqual(0.99)
    // The small tenants use 30/s of the 100/s; the big one gets the other 70 (none wasted).
    expect(result.bigGoodput).toBeGreaterThanOrEqual(0.95 * (CAPACITY - 30))
    expect(result.totalGoodput).toBeGreaterThanOrEqual(0.95 * CAPACITY)
  })
})

test('priorities at 2x: critical always served, no normal request shed while a sheddable one starts', async () => {
  const { byPriority, run } = await priorityMix()
  figures.push(
    `  priorities: served critical ${byPriority.critical.served}/${byPriority.critical.arrived}, normal ` +
      `${byPriority.normal.served}/${byPriority.normal.arrived}, sheddable ${byPriority.sheddable.served}/${byPriority.sheddable.arrived}`,
  )
  expect(byPriority.critical.served / byPriority.critical.arrived).toBeGreaterThanOrEqual(0.999)
  // Never a start while a more important request waits, never a shed while a less important one waits.
  expect(run.observations.startsPastMoreImportant).toBe(0)
  expect(run.observations.shedsPastLessImportant).toBe(0)
  // No sheddable request starts within 100 ms (the interval) after a normal one was shed.
  const normalSheds = run.requests.filter((r) => r.kind.priority === 'normal' && r.result === 'shed')
  const sheddableStarts = run.requests.filter((r) => r.kind.priority === 'sheddable' && r.startedAt !== undefined)
  const overlapping = sheddableStarts.filter((s) =>
    normalSheds.some(
      (n) => (n.endedAt as number) <= (s.startedAt as number) && (s.startedAt as number) < (n.endedAt as number) + 100,
    ),
  )
  expect(overlapping).toEqual([])
  expect(byPriority.sheddable.served).toBeLessThan(0.05 * byPriority.sheddable.arrived)
  expect(run.observations.maxInFlight).toBeLessThanOrEqual(10)
})

test('queue discipline: a standing queue bounds waits to the 5 ms target; a burst may wait longer and is served', () => {
  const result = report.discipline
  figures.push(
    `  controlled delay: standing max wait ${result.standingMaxWaitMs.toFixed(2)} ms (uncontrolled ` +
      `${result.uncontrolledMaxWaitMs.toFixed(0)} ms); burst of 300: ${result.burstShed} shed, max wait ${result.burstMaxWaitMs.toFixed(0)} ms`,
  )
  expect(result.standingMaxWaitMs).toBeLessThanOrEqual(5)
  expect(result.uncontrolledMaxWaitMs).toBeGreaterThan(100)
  expect(result.standingGoodput).toBeGreaterThanOrEqual(0.99 * result.uncontrolledGoodput)
  expect(result.burstShed).toBe(0)
  expect(result.burstMaxWaitMs).toBeGreaterThan(20)
})

test('adaptive LIFO wins when clients give up sooner than the line lets them wait, and costs nothing otherwise', () => {
  const [impatient, patient] = report.orders
  if (impatient === undefined || patient === undefined) throw new Error('two comparisons expected')
  figures.push(
    `  orders: patience 1.1 s fifo ${impatient.goodput.fifo.toFixed(2)}/s, lifo ${impatient.goodput['adaptive-lifo'].toFixed(2)}/s; ` +
      `patience 3 s fifo ${patient.goodput.fifo.toFixed(2)}/s, lifo ${patient.goodput['adaptive-lifo'].toFixed(2)}/s`,
  )
  expect(impatient.goodput['adaptive-lifo']).toBeGreaterThan(5 * impatient.goodput.fifo)
  expect(patient.goodput['adaptive-lifo']).toBeGreaterThanOrEqual(0.95 * patient.goodput.fifo)
})

test("Little's law: a concurrency limit follows the handler's latency; a rate limit keeps admitting", () => {
  const result = report.little
  figures.push(
    `  Little: concurrency ${result.concurrency.map((x) => x.toFixed(1)).join(' -> ')}/s (max ${result.concurrencyMaxInFlight} ` +
      `in flight); rate limit ${result.rateLimit.map((x) => x.toFixed(1)).join(' -> ')}/s (max ${result.rateLimitMaxInFlight} in flight)`,
  )
  const [fast, slow] = result.concurrency
  expect(fast).toBeLessThanOrEqual(120)
  expect(fast).toBeGreaterThan(108)
  expect(slow / fast).toBeGreaterThan(0.45)
  expect(slow / fast).toBeLessThan(0.55)
  expect(result.concurrencyMaxInFlight).toBeLessThanOrEqual(30)
  const [before, after] = result.rateLimit
  expect(after / before).toBeGreaterThan(0.95)
  expect(result.rateLimitMaxInFlight).toBeGreaterThan(55)
})

test('an adaptive ceiling rescues a maxInFlight set 10x too high', () => {
  const result = report.adaptive
  figures.push(
    `  adaptive: p99 ${result.staticP99Ms.toFixed(0)} ms static, ${result.adaptiveP99Ms.toFixed(0)} ms adaptive, ` +
      `goodput ${result.adaptiveGoodput.toFixed(1)}/s, max in flight ${result.adaptiveMaxInFlight}`,
  )
  expect(result.adaptiveGoodput).toBeGreaterThanOrEqual(0.95 * CAPACITY)
  expect(result.adaptiveP99Ms).toBeLessThan(0.35 * result.staticP99Ms)
})

test('the adaptive ceiling cannot be poisoned by cheap requests: legitimate traffic is served as under a fixed one', () => {
  // Before, 3 000/s of 0.2 ms requests in 150 ms pulses set a 0.2 ms baseline, every ordinary window after it cut the
  // ceiling, down to 1, and 55% of the legitimate requests were served.
  const result = report.poisoned
  figures.push(
    `  poisoned ceiling: legitimate served ${(result.fixedServed * 100).toFixed(1)}% fixed, ` +
      `${(result.adaptiveServed * 100).toFixed(1)}% adaptive, lowest ceiling ${result.lowestCeiling}`,
  )
  expect(result.fixedServed).toBeGreaterThanOrEqual(0.999)
  expect(result.adaptiveServed).toBeGreaterThanOrEqual(0.99)
  // 400/s at 10 ms keeps 4 in flight: the ceiling never came down to where it would queue them.
  expect(result.lowestCeiling).toBeGreaterThanOrEqual(8)
})

test('deadlines: no request starts after maxWait, and a waiter is answered at its deadline', async () => {
  // Critical requests are exempt from the standing-queue bound, so they wait the whole maxWait when they must.
  const run = await simulate({
    dependency: { servers: 10, serviceMs: 1000 },
    phases: [{ untilMs: 20_000, perSecond: 20 }],
    patienceMs: PATIENCE_MS,
    shed: { maxInFlight: 10, queue: 100, maxWait: '300ms' },
    kind: () => ({ priority: 'critical', tenant: '' }),
  })
  const started = run.requests.filter((r) => r.startedAt !== undefined)
  const expired = run.requests.filter((r) => r.reason === 'deadline')
  expect(expired.length).toBeGreaterThan(100)
  expect(Math.max(...started.map((r) => (r.startedAt as number) - r.arrivedAt))).toBeLessThan(300)
  const lateness = expired.map((r) => (r.endedAt as number) - r.arrivedAt - 300)
  figures.push(
    `  deadlines: ${expired.length} answered at their deadline, lateness up to ${Math.max(...lateness)} ms (virtual)`,
  )
  for (const late of lateness) expect(Math.abs(late)).toBeLessThan(1e-6)
})

test('npm run demo:overload prints the goodput table and the findings, and charts goodput with and without shedding', () => {
  const lines = goodputTable(report).split('\n')
  expect(lines).toHaveLength(2 + report.goodput.length)
  expect(lines[0]).toContain('goodput, shedLoad')
  expect(lines[2]).toMatch(/^\| 1\.5x \(150\/s\)/)
  expect(findings(report)).toContain('Priorities at 2x')
  // The noisy neighbour in its three arrival patterns, the in-step one included.
  const neighbours = neighbourTable(report).split('\n')
  expect(neighbours.slice(2).map((line) => line.split('|')[1]?.trim())).toEqual(['steady', 'bursty', 'in-step'])
  const svg = overloadChart(report.timeline, CAPACITY)
  expect(svg.startsWith('<svg')).toBe(true)
  expect(svg.match(/<path /g)).toHaveLength(3)
  // Through the 20 s of 2x, the run without shedding collapses to nothing while the shedder holds capacity.
  const overloaded = (series: readonly number[]) => series.slice(20, 50)
  expect(Math.max(...overloaded(report.timeline.without).slice(10))).toBe(0)
  expect(Math.min(...overloaded(report.timeline.with))).toBeGreaterThan(0.85 * CAPACITY)
})
