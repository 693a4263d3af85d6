import type { CalendarPeriod, Outcome } from '@sluice/core/store'
import type { StoreClient } from './client'
import { CallExpired } from './deadlines'
import { errorCode, redisTimeOf } from './errors'
import type { RedisClock } from './redis-clock'
import type { Mode, RuleSet } from './rule-set'
import { scriptForMask } from './script'
import { keySlot } from './slot'

/**
 * The most requests one call evaluates, so that one batch never holds Redis (which runs one script at a time) long,
 * and a burst's replies come back in several calls: each reply is evidence that Redis is answering (see
 * deadlines.ts), and one reply for hundreds of decisions made a starved machine look like a silent Redis. A call of
 * 64 costs Redis well under a millisecond of its time. Each call is a write and a read on both ends, and on a machine
 * where a system call and a wake-up cost tens of microseconds they, not the script, are most of a decision's cost, so
 * fewer, larger calls pay; but a call sent while none is on the wire holds half as many (see `Batches`), so that two
 * calls overlap (bench/src/analysis.md, issue 27).
 */
export const MAX_BATCH_REQUESTS = 64

/**
 * What a batch tells a request's deadline when it sends the request again because Redis answered (NOSCRIPT: with the
 * script; SLUICELATE: with a new deadline): the reply now comes after those of the commands sent before it again (see
 * `Deadlines.run`). It answers whether the request is still waited for: false once it was given up.
 */
export type Resent = () => boolean

/**
 * One request of a batch: what it asks (so that the batches can send it again), where its reply goes, and its
 * deadline's {@link Resent}.
 */
interface Pending {
  readonly ruleSet: RuleSet
  /** Its rules' keys, then their block keys. */
  readonly keys: readonly string[]
  readonly cost: number
  readonly mode: Mode
  /** The instant it is decided at ('' = Redis's clock). */
  readonly now: number | ''
  readonly resolve: (outcomes: ScriptOutcome[]) => void
  readonly reject: (error: unknown) => void
  readonly resent: Resent | undefined
  /** Whether Redis answered it SLUICE_CLOCK already: it was sent again, with boundaries around Redis's time. */
  clockRetried: boolean
}

/** The requests of one turn for one connection (one slot on a Cluster), as one call's keys and arguments. */
class Batch {
  readonly keys: string[] = []
  /** Each distinct rule set once: its rule count, then its rules' arguments (see main.lua). */
  readonly setArgs: (string | number)[]
  /** Each rule set of this batch, by its number less one (a calendar set is never shared: undefined). */
  readonly ruleSets: (RuleSet | undefined)[]
  /**
   * The requests as runs of consecutive ones that share rule set, mode, cost and now: per run, how many, their rule set
   * (from 1), mode, cost, and now ('' = Redis's clock). See main.lua.
   */
  readonly requestArgs: (string | number)[] = []
  /** Per request, its rule set's number (from 1): a batch made of some of them ({@link only}) cuts the runs anew. */
  private readonly setNumbers: number[] = []
  readonly pending: Pending[] = []
  mask: number
  /** Whether it has gone to Redis (it filled up before the turn ended). */
  sent = false
  /**
   * When its first request was made (performance.now()): its deadline counts from then, not from the send a phase
   * later, since each request's wait counts from when it was made (see deadlines.ts).
   */
  readonly openedAt = performance.now()

  /** An empty batch, or one for some of the requests of `sent` (a batch that went to Redis: its sets are settled). */
  constructor(sent?: Batch) {
    this.setArgs = sent?.setArgs ?? []
    this.ruleSets = sent?.ruleSets ?? []
    this.mask = sent?.mask ?? 0
  }

  /** Adds `request`, with calendar boundaries around `aroundMs`. */
  push(request: Pending, aroundMs: number): void {
    this.append(request, this.setOf(request.ruleSet, aroundMs))
  }

  /** A batch of the requests of this one that `keep` picks, with the same rule sets; undefined when it picks none. */
  only(keep: (request: Pending) => boolean): Batch | undefined {
    const kept = new Batch(this)
    const { setNumbers, pending } = this
    for (let i = 0; i < pending.length; i++) {
      const request = pending[i] as Pending
      if (keep(request)) kept.append(request, setNumbers[i] as number)
    }
    return kept.pending.length === 0 ? undefined : kept
  }

  /** Adds `request` of rule set number `set`: to the last run when it shares that run's arguments, else as a new run. */
  private append(request: Pending, set: number): void {
    const { keys } = request
    for (let i = 0; i < keys.length; i++) this.keys.push(keys[i] as string)
    const { requestArgs } = this
    const run = requestArgs.length - 5
    if (
      run >= 0 &&
      requestArgs[run + 1] === set &&
      requestArgs[run + 2] === request.mode &&
      requestArgs[run + 3] === request.cost &&
      requestArgs[run + 4] === request.now
    ) {
      requestArgs[run] = (requestArgs[run] as number) + 1
    } else {
      requestArgs.push(1, set, request.mode, request.cost, request.now)
    }
    this.setNumbers.push(set)
    this.pending.push(request)
  }

  /** The number of `ruleSet` in this batch; a calendar set has its own boundaries, so its own entry. */
  setOf(ruleSet: RuleSet, aroundMs: number): number {
    // A batch holds a handful of rule sets at most, most often one: a scan beats a Map.
    const known = ruleSet.calendar ? -1 : this.ruleSets.indexOf(ruleSet)
    if (known !== -1) return known + 1
    const { setArgs } = this
    setArgs.push(ruleSet.ruleCount)
    for (const arg of ruleSet.ruleArgs) {
      if (typeof arg === 'string') setArgs.push(arg)
      else setArgs.push(...(arg as CalendarPeriod).boundariesAround(aroundMs))
    }
    this.mask |= ruleSet.codeMask
    return this.ruleSets.push(ruleSet.calendar ? undefined : ruleSet)
  }
}

/**
 * Coalesces the decisions of one turn of the event loop: the requests that arrive before it ends go to Redis as one
 * script call that decides them all in arrival order (on a Cluster, one call per slot, since a call's keys must share
 * one), and each reply goes back to its request. A request waits for no company, and never for a timer. While a call
 * is on the wire, the batch is sent in the check phase of the turn it was made in (setImmediate), after the poll phase
 * has handed every request that arrived with it (HTTP requests arrive one I/O callback each, and a microtask would
 * send each alone); while none is, at once (a microtask, after the requests made in the same run of code), since
 * there is no load to coalesce, and the lone call would wait a phase for nothing (as Nagle's algorithm sends a lone
 * segment at once). A batch also goes at once when it reaches `maxRequests` ({@link MAX_BATCH_REQUESTS}, or 1 when
 * the store does not coalesce: each request is then sent as it is made), or half that while no call is on the wire:
 * the burst's next requests then go in a second call, which Redis decides while this instance reads the first one's
 * reply, and as each reply's requests make the next batch, the two calls keep taking turns. (One call of 64 for 64
 * decisions in flight left Redis and this instance each idle while the other worked: 0.85x the peer's decisions per
 * second on an idle machine, against 1.4x to 1.55x with the half-size first call.)
 *
 * The batches own every retry of a request, and no other layer retries one:
 * - NOSCRIPT (a Redis restart, SCRIPT FLUSH, a Cluster node that never ran it; also inside ioredis Cluster's "Too many
 *   Cluster redirections"): the call goes once more as one EVAL with the script's text, which loads it again.
 * - SLUICELATE (Redis ran the call past its deadline, and nothing was charged): once more without a deadline when the
 *   clocks stepped; else each request still waited for goes again with a new deadline, and the others fail.
 * - SLUICE_CLOCK (one request's calendar boundaries are a period away from Redis's clock): that request goes once
 *   more, with boundaries around Redis's time; a second one is an error, never a guess.
 * A request sent again because Redis answered tells its deadline ({@link Resent}).
 *
 * @example
 * const batches = new Batches(client, false, 0, new RedisClock(3000))
 * const [outcome] = await batches.add(ruleSet, ['sluice:default:fw:{42}'], 1, 'charge', '', Date.now(), undefined)
 */
export class Batches {
  /** The batch this turn fills, on a single connection. */
  private single: Batch | undefined
  /**
   * On a Cluster, this turn's batch per slot. A new Map each turn, never cleared, and a full batch is replaced, never
   * deleted: V8 links a Map's old table to the table that replaces it (for live iterators), so once an old table had
   * reached the old generation, every later turn's batches stayed reachable through that chain, survived the young
   * collections and were promoted (2.2 MB per scavenge at one request in flight, before).
   */
  private bySlot = new Map<number, Batch>()
  private scheduled = false
  /** Calls sent and not answered yet. */
  private onTheWire = 0
  /** The most requests a call sent while no other is on the wire decides: half of `maxRequests`. */
  private readonly firstCallRequests: number

  constructor(
    private readonly client: Pick<StoreClient, 'evalsha' | 'eval'>,
    private readonly cluster: boolean,
    /** How much longer than its logical expiry a key lives (the tests' replay clock only). */
    private readonly extraTtlMs: number,
    /** The Redis clock as this instance sees it: each call's deadline. */
    private readonly clock: RedisClock,
    /** The most requests one call decides: MAX_BATCH_REQUESTS, or 1 (`coalesce: false`). */
    private readonly maxRequests = MAX_BATCH_REQUESTS,
  ) {
    this.firstCallRequests = Math.max(1, maxRequests >> 1)
  }

  /**
   * Adds a request to its batch: `keys` are its rules' keys and block keys, `now` the instant it is decided at (''
   * for Redis's clock), `aroundMs` the time a calendar rule's boundaries are sent around, `resent` whom to tell when
   * the request is sent again (see {@link Resent}; without it, a request Redis ran too late fails). Settles with its
   * outcomes (one per rule), or with the error the script gave for this request alone, or the call's.
   */
  add(
    ruleSet: RuleSet,
    keys: readonly string[],
    cost: number,
    mode: Mode,
    now: number | '',
    aroundMs: number,
    resent: Resent | undefined,
  ): Promise<ScriptOutcome[]> {
    let request: Pending | undefined
    const outcomes = new Promise<ScriptOutcome[]>((resolve, reject) => {
      request = { ruleSet, keys, cost, mode, now, resolve, reject, resent, clockRetried: false }
    })
    this.enqueue(request as Pending, aroundMs)
    return outcomes
  }

  /** Puts `request` in this turn's batch, and sends the batch once full. */
  private enqueue(request: Pending, aroundMs: number): void {
    const batch = this.cluster ? this.slotBatch(request.keys[0] as string) : this.singleBatch()
    batch.push(request, aroundMs)
    // With no call on the wire, a batch goes at half the size: the rest of the burst follows in a second call, which
    // Redis decides while this instance reads the first one's reply. One call for all of them would leave each side
    // idle while the other works, for as long as the requests keep coming back in one turn (each reply's requests
    // make the next batch).
    const full = this.onTheWire === 0 ? this.firstCallRequests : this.maxRequests
    if (batch.pending.length >= full) {
      if (batch === this.single) this.single = undefined
      this.dispatch(batch)
    } else if (!this.scheduled) {
      this.scheduled = true
      // Nothing on the wire: the batch goes once this run of code is done (the requests made with this one, as a
      // Promise.all, join it), not a phase of the loop later. Calls on the wire: later requests will come (their
      // replies), so the batch waits for the end of the turn and takes the requests the poll phase hands over.
      if (this.onTheWire === 0) queueMicrotask(this.flush)
      else setImmediate(this.flush)
    }
  }

  /** This turn's batch on a single connection. */
  private singleBatch(): Batch {
    if (this.single === undefined) this.single = new Batch()
    return this.single
  }

  /** This turn's batch for the slot of `key`: a new one when there is none yet, or the last one filled up. */
  private slotBatch(key: string): Batch {
    const slot = keySlot(key)
    let batch = this.bySlot.get(slot)
    if (batch === undefined || batch.sent) {
      batch = new Batch()
      this.bySlot.set(slot, batch)
    }
    return batch
  }

  private readonly flush = (): void => {
    this.scheduled = false
    const { single, bySlot } = this
    if (single !== undefined) {
      this.single = undefined
      this.dispatch(single)
    }
    if (bySlot.size > 0) {
      this.bySlot = new Map()
      for (const batch of bySlot.values()) if (!batch.sent) this.dispatch(batch)
    }
  }

  private dispatch(batch: Batch): void {
    batch.sent = true
    this.call(batch, performance.now(), this.clock.notAfter(batch.openedAt))
  }

  /**
   * Sends `batch` with `notAfter` (see main.lua) as one EVALSHA, after NOSCRIPT as one EVAL with the script's text, and
   * settles its requests with the reply.
   */
  private call(batch: Batch, sentAt: number, notAfter: number | ''): void {
    const { client } = this
    const { keys, pending } = batch
    // The keys, then the arguments, in one array built once: spread once into the call (and the EVAL after NOSCRIPT).
    const keysAndArgs: (string | number)[] = keys.slice()
    keysAndArgs.push(this.extraTtlMs, notAfter, batch.ruleSets.length)
    for (const arg of batch.setArgs) keysAndArgs.push(arg)
    for (const arg of batch.requestArgs) keysAndArgs.push(arg)
    const script = scriptForMask(batch.mask)
    let sent: Promise<unknown>
    try {
      sent = client.evalsha(script.sha, keys.length, ...keysAndArgs).catch((error: unknown) => {
        if (errorCode(error) !== 'NOSCRIPT') throw error
        // Redis answered: each request goes on with the reload, behind what was sent meanwhile.
        for (const request of pending) request.resent?.()
        return client.eval(script.source, keys.length, ...keysAndArgs)
      })
    } catch (error) {
      sent = Promise.reject(error)
    }
    this.onTheWire++
    sent.then(
      (reply) => {
        this.onTheWire--
        this.settle(pending, reply)
      },
      (error: unknown) => {
        this.onTheWire--
        this.failed(batch, error, sentAt, notAfter)
      },
    )
  }

  /** A call that failed as a whole: SLUICELATE is retried (see the class), anything else fails every request. */
  private failed(batch: Batch, error: unknown, sentAt: number, notAfter: number | ''): void {
    const lateAt = redisTimeOf(error, 'SLUICELATE')
    if (lateAt === undefined || notAfter === '') {
      for (const request of batch.pending) request.reject(error)
      return
    }
    // Nothing was charged. A reply back this soon means the clocks moved, not the call: once more, with no
    // deadline. Else Redis ran it past its deadline (it was held or redirected, or it waited behind a burst).
    const now = performance.now()
    if (this.clock.wasStep(lateAt, sentAt, now)) {
      this.call(batch, sentAt, '')
      return
    }
    const expired = new CallExpired(
      `Redis ran the call ${Math.round(lateAt - (notAfter - this.clock.lateMs))} ms after it was sent, past its deadline: nothing was charged`,
      'node',
    )
    // The deadline counts wall time, which this instance may have spent itself before Redis saw the call (a burst
    // dispatched in one run, a client that writes in a later phase). A request still waited for goes again, with
    // a new deadline: Redis answers, and nobody has given up on it. The others fail as a timeout would.
    const again = batch.only((request) => {
      if (request.resent?.() === true) return true
      request.reject(expired)
      return false
    })
    if (again !== undefined) this.call(again, now, this.clock.notAfter(now))
  }

  /**
   * The error the script gave for `request` alone. SLUICE_CLOCK: the Redis clock is more than a calendar period away
   * from this instance's, so the request goes once more, with boundaries around Redis's time; a second such answer
   * (the Redis clock jumped by a period within one round trip) is an error, never a guess.
   */
  private failedAlone(request: Pending, message: string): void {
    const error = new Error(message)
    const redisMs = request.ruleSet.calendar ? redisTimeOf(error, 'SLUICE_CLOCK') : undefined
    if (redisMs === undefined) {
      request.reject(error)
    } else if (request.clockRetried) {
      request.reject(
        new Error(`sluice: the Redis clock moved by more than a calendar period during one call (${error})`),
      )
    } else {
      request.clockRetried = true
      this.enqueue(request, redisMs)
    }
  }

  /** Gives each request of a batch its entry of `reply`, and learns the Redis clock from its last number. */
  private settle(pending: readonly Pending[], reply: unknown): void {
    if (!Array.isArray(reply) || reply.length === 0) {
      for (const request of pending) request.reject(unexpectedReply(reply))
      return
    }
    const end = reply.length - 1
    this.clock.sample(Number(reply[end]), performance.now())
    let at = 0
    for (const request of pending) {
      const entry: unknown = reply[at]
      const { ruleCount } = request.ruleSet
      const fields = FIELDS_PER_RULE * ruleCount
      // A string is the error of this request alone (see main.lua); else five numbers per rule.
      if (typeof entry === 'string') {
        this.failedAlone(request, entry)
        at++
      } else if (at + fields <= end) {
        request.resolve(outcomesAt(reply, at, ruleCount))
        at += fields
      } else {
        request.reject(unexpectedReply(reply))
      }
    }
  }
}

const FIELDS_PER_RULE = 5

// Not a closure made per reply: the build keeps function names (--keep-names), which costs a defineProperty for each
// named closure created, 3.7 µs per lone decision in a profile.
function unexpectedReply(reply: unknown): Error {
  return new Error(`sluice: unexpected reply from the Redis script: ${JSON.stringify(reply)}`)
}

/** What the script answers for one rule: its outcome, and for a rule that refused, how long its key stays blocked. */
export interface ScriptOutcome extends Outcome {
  /** The rest of the key's block (the rule's `block`) in ms, when the rule refused; 0 when it admitted or none runs. */
  readonly blockLeftMs: number
  /** Whether the key's time is ahead of the clock (it stepped back): its numbers jump when the clock catches up. */
  readonly keyAhead: boolean
}

/**
 * The outcomes of a request whose entry starts at `at` of the reply, five numbers per rule: allowed (1 | 0), remaining,
 * reset_ms, retry_after_ms (-1 = never), and delay_ms (admitted) or the rest of the block (refused), as -1 - it when
 * the key's time is ahead of the clock (see main.lua).
 */
function outcomesAt(reply: readonly unknown[], at: number, ruleCount: number): ScriptOutcome[] {
  const outcomes: ScriptOutcome[] = []
  for (let i = at; i < at + FIELDS_PER_RULE * ruleCount; i += FIELDS_PER_RULE) {
    const allowed = reply[i] === 1
    const retryAfterMs = Number(reply[i + 3])
    const keyAhead = Number(reply[i + 4]) < 0
    const last = keyAhead ? -1 - Number(reply[i + 4]) : Number(reply[i + 4])
    outcomes.push({
      allowed,
      remaining: Number(reply[i + 1]),
      resetMs: Number(reply[i + 2]),
      retryAfterMs: retryAfterMs === -1 ? Number.POSITIVE_INFINITY : retryAfterMs,
      delayMs: allowed ? last : 0,
      blockLeftMs: allowed ? 0 : last,
      keyAhead,
    })
  }
  return outcomes
}
