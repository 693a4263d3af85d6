import type { RequestRecord, SimulationRun } from './simulation'

/** The value below which `fraction` of the sorted `values` fall (nearest rank). */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] as number
}

/** How long a served request took, from sending to its answer. */
export function latencyOf(request: RequestRecord): number {
  return (request.endedAt as number) - request.arrivedAt
}

/** The requests that arrived in [fromMs, toMs). */
export function arrivedBetween(run: SimulationRun, fromMs: number, toMs: number): RequestRecord[] {
  return run.requests.filter((r) => r.arrivedAt >= fromMs && r.arrivedAt < toMs)
}

/** Steady-state figures over the arrivals in [fromMs, toMs). */
export interface Steady {
  /** Answers that reached their client in time, per second. */
  readonly goodput: number
  /** p99 latency of the served requests, in ms. */
  readonly p99Ms: number
  /** Fraction of arrivals shed (503). */
  readonly shedFraction: number
}

export function steady(run: SimulationRun, fromMs: number, toMs = run.durationMs): Steady {
  const requests = arrivedBetween(run, fromMs, toMs)
  const served = requests.filter((r) => r.result === 'served')
  // Goodput counts answers by when they reach the client, so a backlog that drains after the window is not counted.
  const answered = run.requests.filter(
    (r) => r.result === 'served' && (r.endedAt as number) >= fromMs && (r.endedAt as number) < toMs,
  )
  return {
    goodput: (answered.length * 1000) / (toMs - fromMs),
    p99Ms: percentile(served.map(latencyOf), 0.99),
    shedFraction: requests.filter((r) => r.result === 'shed').length / Math.max(1, requests.length),
  }
}

/** Served answers per bucket of `bucketMs`, by the instant they reached their client. */
export function goodputSeries(run: SimulationRun, bucketMs: number): number[] {
  const series = new Array<number>(Math.ceil(run.durationMs / bucketMs)).fill(0)
  for (const r of run.requests) {
    if (r.result !== 'served') continue
    const bucket = Math.floor((r.endedAt as number) / bucketMs)
    if (bucket < series.length) series[bucket] = (series[bucket] as number) + 1000 / bucketMs
  }
  return series
}

/** The fraction of arrivals shed in each bucket of `bucketMs`, by arrival. */
export function shedSeries(run: SimulationRun, bucketMs: number): number[] {
  const arrived = new Array<number>(Math.ceil(run.durationMs / bucketMs)).fill(0)
  const shed = arrived.slice()
  for (const r of run.requests) {
    const bucket = Math.floor(r.arrivedAt / bucketMs)
    arrived[bucket] = (arrived[bucket] as number) + 1
    if (r.result === 'shed') shed[bucket] = (shed[bucket] as number) + 1
  }
  return shed.map((n, i) => n / Math.max(1, arrived[i] as number))
}
