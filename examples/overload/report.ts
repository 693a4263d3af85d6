import * as scenarios from './scenarios'

const pct = (x: number) => `${Math.round(x * 100)}%`
const ms = (x: number) => `${Math.round(x)} ms`
const perSecond = (x: number) => `${x.toFixed(1)}/s`

/** A markdown table with the first column left-aligned and the others right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)))
  const format = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(' | ')} |`
  return [format(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(format)].join('\n')
}

/** Every experiment's figures, as the demo prints them and the README quotes them. */
export interface Report {
  readonly goodput: readonly scenarios.GoodputRow[]
  readonly unloadedP99Ms: number
  readonly reaction: scenarios.Reaction
  readonly neighbours: readonly scenarios.NoisyNeighbour[]
  readonly priorities: scenarios.PriorityMix['byPriority']
  readonly discipline: scenarios.QueueDiscipline
  readonly orders: readonly scenarios.OrderComparison[]
  readonly little: scenarios.LittlesLaw
  readonly adaptive: scenarios.AdaptiveCeiling
  readonly poisoned: scenarios.PoisonedCeiling
  readonly timeline: scenarios.Timeline
}

export async function runExperiments(): Promise<Report> {
  return {
    goodput: await Promise.all(scenarios.LOADS.map((multiple) => scenarios.goodputAt(multiple))),
    unloadedP99Ms: await scenarios.unloadedP99Ms(),
    reaction: await scenarios.stepReaction(),
    neighbours: await Promise.all(scenarios.ARRIVAL_PATTERNS.map((pattern) => scenarios.noisyNeighbour(pattern))),
    priorities: (await scenarios.priorityMix()).byPriority,
    discipline: await scenarios.queueDiscipline(),
    orders: [await scenarios.queueOrders(1100), await scenarios.queueOrders(3000)],
    little: await scenarios.littlesLaw(),
    adaptive: await scenarios.adaptiveCeiling(),
    poisoned: await scenarios.poisonedCeiling(),
    timeline: await scenarios.overloadTimeline(),
  }
}

/** The goodput table. */
export function goodputTable(report: Report): string {
  return table(
    ['offered load', 'goodput, no shedding', 'goodput, shedLoad', 'shed', 'p99, shedLoad (x unloaded)'],
    report.goodput.map((row) => [
      `${row.multiple}x (${row.multiple * scenarios.CAPACITY}/s)`,
      `${perSecond(row.without.goodput)} (${pct(row.without.goodput / scenarios.CAPACITY)})`,
      `${perSecond(row.with.goodput)} (${pct(row.with.goodput / scenarios.CAPACITY)})`,
      pct(row.with.shedFraction),
      `${ms(row.with.p99Ms)} (${(row.with.p99Ms / report.unloadedP99Ms).toFixed(2)}x)`,
    ]),
  )
}

/** The noisy-neighbour table: the small tenants in each arrival pattern. */
export function neighbourTable(report: Report): string {
  return table(
    [
      'small tenants arrive',
      'worst small tenant served',
      'small tenants served',
      'big tenant goodput',
      'total goodput',
    ],
    report.neighbours.map((n) => [
      n.pattern,
      pct(n.worstSmallTenantServed),
      pct(n.smallServed),
      perSecond(n.bigGoodput),
      perSecond(n.totalGoodput),
    ]),
  )
}

/** The other experiments, one line each. */
export function findings(report: Report): string {
  const { reaction, priorities, discipline, orders, little, adaptive, poisoned } = report
  const share = (p: keyof typeof priorities) => pct(priorities[p].served / priorities[p].arrived)
  return [
    `Step 0.5x -> 3x -> 0.5x: first 503 ${ms(reaction.firstShedMs)} after the step; shed rate settled at ` +
      `${pct(reaction.steadyShedRate)} within ${reaction.settledMs / 1000} s; last 503 ${ms(reaction.lastShedAfterDropMs)} after the drop.`,
    `Priorities at 2x (10% critical, 60% normal, 30% sheddable): served critical ${share('critical')}, normal ` +
      `${share('normal')}, sheddable ${share('sheddable')}.`,
    `Controlled delay (5 000/s service, line of 1 000, 2x): longest wait once the queue stands ${discipline.standingMaxWaitMs.toFixed(1)} ms ` +
      `(without it ${ms(discipline.uncontrolledMaxWaitMs)}); a burst of 300 on a quiet service: ${discipline.burstShed} shed, ` +
      `longest wait ${ms(discipline.burstMaxWaitMs)}.`,
    ...orders.map(
      (o) =>
        `FIFO vs adaptive LIFO (1 s service at 2x, clients give up after ${o.patienceMs / 1000} s): goodput ` +
        `${perSecond(o.goodput.fifo)} vs ${perSecond(o.goodput['adaptive-lifo'])}.`,
    ),
    `Little's law (concurrency limit 30, 200/s offered): ${perSecond(little.concurrency[0])} complete with a 250 ms handler, ` +
      `${perSecond(little.concurrency[1])} with 500 ms; a rate limit of 120/s admits ${perSecond(little.rateLimit[0])} then ` +
      `${perSecond(little.rateLimit[1])}, and its requests in flight reach ${little.rateLimitMaxInFlight}.`,
    `Adaptive ceiling (maxInFlight 100 on a service of 10, 2x): p99 ${ms(adaptive.staticP99Ms)} static, ` +
      `${ms(adaptive.adaptiveP99Ms)} adaptive (at most ${adaptive.adaptiveMaxInFlight} in flight), goodput ${perSecond(adaptive.adaptiveGoodput)}.`,
    `Poisoning the adaptive ceiling (400/s at 10 ms, plus 3 000/s of 0.2 ms 404s in 150 ms pulses): legitimate requests ` +
      `served ${pct(poisoned.fixedServed)} with a fixed ceiling, ${pct(poisoned.adaptiveServed)} with an adaptive one ` +
      `(its lowest ceiling ${poisoned.lowestCeiling}).`,
  ].join('\n')
}
