import {
  createShedder,
  PRIORITIES,
  type Priority,
  type Shedder,
  type ShedderOptions,
  type ShedReason,
  type Ticket,
} from '@sluice/core'
import { seededRandom, VirtualTime } from './virtual-time'

/**
 * The service behind the shedder: `servers` requests at a time, each taking `serviceMs`, with an unbounded
 * first-in-first-out line in front, the way a database pool or a downstream API behaves. It keeps working on a
 * request whose client has gone: it cannot know.
 */
export interface DependencySpec {
  /** How many it serves at once (Infinity: a handler that only waits, such as a timer or a remote call). */
  readonly servers: number
  /** How long each takes, or a function of the instant it starts (a service that slows down). */
  readonly serviceMs: number | ((now: number) => number)
}

/** A gate other than the shedder: a concurrency limit or a rate limit, asked per request. */
export type Gate = (kind: RequestKind) => Promise<{ readonly allowed: boolean; release(): void }>

/** Offered load: `perSecond` Poisson arrivals until `untilMs` (phases in order). */
export interface Phase {
  readonly untilMs: number
  readonly perSecond: number
}

/** What a request is: its priority and tenant. */
export interface RequestKind {
  readonly priority: Priority
  readonly tenant: string
}

export interface SimulationSpec {
  readonly dependency: DependencySpec
  readonly phases: readonly Phase[]
  /** Clients give up (and close the connection) this long after sending. */
  readonly patienceMs: number
  /** The shedder's options (its timers are the simulation's); undefined runs without one. */
  readonly shed?: Omit<ShedderOptions, 'timers'>
  /** A gate instead of the shedder, built on the simulation's time; released when the request ends. */
  readonly gate?: (time: VirtualTime) => Gate
  /** Draws each request's kind. Default: normal, one tenant. */
  readonly kind?: (random: () => number) => RequestKind
  /** Seed of the arrivals. */
  readonly seed?: number
  /** Also `count` requests at the one instant `atMs`, on top of the phases. */
  readonly burst?: { readonly atMs: number; readonly count: number }
  /**
   * Requests the app answers itself, without the dependency (a 404, or the 429 of a limiter mounted after shedLoad):
   * how long that takes for a kind, or undefined for a request that calls the dependency.
   */
  readonly answeredMs?: (kind: RequestKind) => number | undefined
  /** Called after each admission with the shedder, to watch its state (its ceiling, say). */
  readonly observe?: (shedder: Shedder, now: number) => void
  /** More arrivals on top of the phases: `arrive(atMs, kind)` for each, drawn with the run's `random`. */
  readonly extra?: (arrive: (atMs: number, kind: RequestKind) => void, random: () => number) => void
}

export type Result = 'served' | 'late' | 'shed' | 'abandoned' | 'limited'

/** One request as the simulation saw it. */
export interface RequestRecord {
  readonly arrivedAt: number
  readonly kind: RequestKind
  result: Result | 'pending'
  startedAt: number | undefined
  /** When the answer reached the client (served), or when it was shed. */
  endedAt: number | undefined
  reason: ShedReason | undefined
}

/** What the run observed beyond the requests themselves. */
export interface Observations {
  /** The most requests in flight at once (by the shedder's count). */
  readonly maxInFlight: number
  /** Starts of a request while a more important one was waiting. */
  readonly startsPastMoreImportant: number
  /** Requests shed while a less important one was waiting. */
  readonly shedsPastLessImportant: number
  /** The dependency's longest line. */
  readonly dependencyBacklog: number
}

export interface SimulationRun {
  readonly requests: readonly RequestRecord[]
  readonly observations: Observations
  readonly durationMs: number
}

const noop = () => undefined
const NORMAL: RequestKind = { priority: 'normal', tenant: '' }

/**
 * Runs open-loop traffic through the real core shedder (or none) against the dependency, on virtual time. A client
 * that gives up closes its connection: as the adapters do on 'close', a waiting request leaves the line and a
 * running one frees its slot, though the dependency still works on it.
 */
export async function simulate(spec: SimulationSpec): Promise<SimulationRun> {
  const time = new VirtualTime()
  const random = seededRandom(spec.seed ?? 1)
  const shedder = spec.shed === undefined ? undefined : createShedder({ ...spec.shed, timers: time })
  const gate = spec.gate?.(time)
  let gating = 0
  const requests: RequestRecord[] = []
  const waitingByRank = PRIORITIES.map(() => 0)
  let maxInFlight = 0
  let startsPastMoreImportant = 0
  let shedsPastLessImportant = 0

  // The dependency: `servers` at a time, first come first served, whoever is still waiting for the answer.
  const backlog: (() => void)[] = []
  let backlogHead = 0
  let busy = 0
  let dependencyBacklog = 0
  const serve = (done: () => void) => {
    busy++
    const { serviceMs } = spec.dependency
    time.setTimeout(
      () => {
        // The freed server takes the head of the backlog before anyone hears of the answer: the answer may bring a
        // new request at once, and it must queue behind those already waiting.
        busy--
        if (backlogHead < backlog.length) {
          const next = backlog[backlogHead] as () => void
          backlog[backlogHead++] = noop
          serve(next)
        }
        done()
      },
      typeof serviceMs === 'number' ? serviceMs : serviceMs(time.now()),
    )
  }
  const callDependency = (done: () => void) => {
    if (busy < spec.dependency.servers) serve(done)
    else {
      backlog.push(done)
      dependencyBacklog = Math.max(dependencyBacklog, backlog.length - backlogHead)
    }
  }

  const rankOf = (record: RequestRecord) => PRIORITIES.indexOf(record.kind.priority)
  const moreImportantWaiting = (rank: number) => waitingByRank.slice(0, rank).some((n) => n > 0)
  const lessImportantWaiting = (rank: number) => waitingByRank.slice(rank + 1).some((n) => n > 0)

  const run = (record: RequestRecord, release: () => void) => {
    record.startedAt = time.now()
    if (shedder !== undefined) maxInFlight = Math.max(maxInFlight, shedder.inFlight)
    let gone = false
    const patience = time.at(record.arrivedAt + spec.patienceMs, () => {
      gone = true
      record.result = 'late'
      release()
    })
    const answeredMs = spec.answeredMs?.(record.kind)
    const call = answeredMs === undefined ? callDependency : (done: () => void) => time.setTimeout(done, answeredMs)
    call(() => {
      if (gone) return
      time.clearTimeout(patience)
      record.result = 'served'
      record.endedAt = time.now()
      release()
    })
  }

  const shed = (record: RequestRecord, ticket: Ticket) => {
    if (lessImportantWaiting(rankOf(record))) shedsPastLessImportant++
    record.result = 'shed'
    record.endedAt = time.now()
    record.reason = ticket.reason
  }

  const arrive = (kind: RequestKind) => {
    const record: RequestRecord = {
      arrivedAt: time.now(),
      kind,
      result: 'pending',
      startedAt: undefined,
      endedAt: undefined,
      reason: undefined,
    }
    requests.push(record)
    if (gate !== undefined) {
      gating++
      void gate(kind).then((slot) => {
        gating--
        if (slot.allowed) run(record, () => slot.release())
        else {
          record.result = 'limited'
          record.endedAt = time.now()
        }
      })
      return
    }
    if (shedder === undefined) {
      run(record, () => undefined)
      return
    }
    const rank = rankOf(record)
    const ticket = shedder.admit(kind, (decided) => {
      if (decided.state === 'released') return // the client gave up waiting, counted where it did
      waitingByRank[rank] = (waitingByRank[rank] as number) - 1
      if (decided.state === 'running') {
        if (moreImportantWaiting(rank)) startsPastMoreImportant++
        run(record, () => decided.release())
      } else shed(record, decided)
    })
    spec.observe?.(shedder, time.now())
    if (ticket.state === 'running') {
      if (moreImportantWaiting(rank)) startsPastMoreImportant++
      run(record, () => ticket.release())
    } else if (ticket.state === 'shed') shed(record, ticket)
    else {
      waitingByRank[rank] = (waitingByRank[rank] as number) + 1
      time.at(record.arrivedAt + spec.patienceMs, () => {
        if (ticket.state !== 'waiting') return
        waitingByRank[rank] = (waitingByRank[rank] as number) - 1
        record.result = 'abandoned'
        ticket.release()
      })
    }
  }

  // Poisson arrivals, phase by phase (exponential gaps are memoryless, so a phase can start afresh).
  let start = 0
  for (const phase of spec.phases) {
    if (phase.perSecond > 0) {
      let at = start
      for (;;) {
        at += (-Math.log(1 - random()) * 1000) / phase.perSecond
        if (at >= phase.untilMs) break
        const kind = spec.kind?.(random) ?? NORMAL
        time.at(at, () => arrive(kind))
      }
    }
    start = phase.untilMs
  }
  if (spec.burst !== undefined) {
    for (let i = 0; i < spec.burst.count; i++) {
      const kind = spec.kind?.(random) ?? NORMAL
      time.at(spec.burst.atMs, () => arrive(kind))
    }
  }
  spec.extra?.((atMs, kind) => {
    time.at(atMs, () => arrive(kind))
  }, random)
  const durationMs = start
  const end = durationMs + spec.patienceMs + 1
  if (gate === undefined) time.runUntil(end)
  else await time.runUntilSettled(end, () => gating > 0)
  return {
    requests,
    durationMs,
    observations: { maxInFlight, startsPastMoreImportant, shedsPastLessImportant, dependencyBacklog },
  }
}
