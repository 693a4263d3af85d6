import type { CalendarPeriod, Outcome } from '@sluice/core/store'
import { CallExpired } from './deadlines'
import { redisTimeOf } from './errors'
import type { RedisClock } from './redis-clock'
import type { Mode, RuleSet } from './rule-set'
import { type Script, scriptForMask } from './script'
import { keySlot } from './slot'

/**
 * The most requests one call evaluates, so that one batch never holds Redis (which runs one script at a time) long,
 * and a burst's replies come back in several calls: each reply is evidence that Redis is answering (see
 * deadlines.ts), and one reply for hundreds of decisions made a starved machine look like a silent Redis.
 */
export const MAX_BATCH_REQUESTS = 16

/**
 * One script call, as the runner sends it: the script, its keys, and its other arguments; `replied` is told when Redis
 * answered NOSCRIPT and the call is sent again with the script.
 */
export type Send = (
  script: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
  replied: () => void,
) => Promise<unknown>

/**
 * One request of a batch: where its reply goes, and whom to tell that it is sent again (after NOSCRIPT or SLUICELATE),
 * which answers whether the request is still waited for.
 */
interface Pending {
  /** How many rules it has: its entry of the reply is five numbers per rule. */
  readonly ruleCount: number
  /** How many keys it has in the batch's keys. */
  readonly keyCount: number
  readonly resolve: (outcomes: ScriptOutcome[]) => void
  readonly reject: (error: unknown) => void
  readonly resent: (() => boolean) | undefined
}

/** The requests of one turn for one connection (one slot on a Cluster), as one call's keys and arguments. */
class Batch {
  readonly keys: string[] = []
  /** Each distinct rule set once: its rule count, then its rules' arguments (see main.lua). */
  readonly setArgs: (string | number)[]
  /** Each rule set of this batch, by its number less one (a calendar set is never shared: undefined). */
  readonly ruleSets: (RuleSet | undefined)[]
  /** Per request: its rule set (from 1), mode, cost, and now ('' = Redis's clock). */
  readonly requestArgs: (string | number)[] = []
  readonly pending: Pending[] = []
  mask: number
  /** Whether it has gone to Redis (it filled up before the turn ended). */
  sent = false

  /** An empty batch, or one for some of the requests of `sent` (a batch that went to Redis: its sets are settled). */
  constructor(sent?: Batch) {
    this.setArgs = sent?.setArgs ?? []
    this.ruleSets = sent?.ruleSets ?? []
    this.mask = sent?.mask ?? 0
  }

  /** A batch of the requests of this one that `keep` picks, with the same rule sets; undefined when it picks none. */
  only(keep: (request: Pending) => boolean): Batch | undefined {
    const kept = new Batch(this)
    const { keys, requestArgs, pending } = this
    let keyAt = 0
    for (let i = 0; i < pending.length; i++) {
      const request = pending[i] as Pending
      if (keep(request)) {
        for (let k = keyAt; k < keyAt + request.keyCount; k++) kept.keys.push(keys[k] as string)
        for (let a = 4 * i; a < 4 * i + 4; a++) kept.requestArgs.push(requestArgs[a] as string | number)
        kept.pending.push(request)
      }
      keyAt += request.keyCount
    }
    return kept.pending.length === 0 ? undefined : kept
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
 * one), and each reply goes back to its request. A request waits for no company: the batch is sent in the check phase
 * of the turn it was made in (setImmediate, no timer), after the poll phase has handed every request that arrived
 * with it (HTTP requests arrive one I/O callback each, and a microtask would send each alone); or at once when it
 * reaches `maxRequests` ({@link MAX_BATCH_REQUESTS}, or 1 when the store does not coalesce: each request is then sent
 * as it is made).
 *
 * @example
 * const batches = new Batches(send, false, 0, new RedisClock(3000))
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

  constructor(
    private readonly send: Send,
    private readonly cluster: boolean,
    /** How much longer than its logical expiry a key lives (the tests' replay clock only). */
    private readonly extraTtlMs: number,
    /** The Redis clock as this instance sees it: each call's deadline. */
    private readonly clock: RedisClock,
    /** The most requests one call decides: MAX_BATCH_REQUESTS, or 1 (`coalesce: false`). */
    private readonly maxRequests = MAX_BATCH_REQUESTS,
  ) {}

  /**
   * Adds a request to its batch: `keys` are its rules' keys and block keys, `now` the instant it is decided at (''
   * for Redis's clock), `aroundMs` the time a calendar rule's boundaries are sent around, `resent` whom to tell when
   * the request is sent again (it answers whether the request is still waited for; without it, a request Redis ran
   * too late fails). Settles with its outcomes (one per rule), or with the error the script gave for this request
   * alone, or the call's.
   */
  add(
    ruleSet: RuleSet,
    keys: readonly string[],
    cost: number,
    mode: Mode,
    now: number | '',
    aroundMs: number,
    resent: (() => boolean) | undefined,
  ): Promise<ScriptOutcome[]> {
    const batch = this.cluster ? this.slotBatch(keys[0] as string) : this.singleBatch()
    const set = batch.setOf(ruleSet, aroundMs)
    for (let i = 0; i < keys.length; i++) batch.keys.push(keys[i] as string)
    batch.requestArgs.push(set, mode, cost, now)
    const outcomes = new Promise<ScriptOutcome[]>((resolve, reject) => {
      batch.pending.push({ ruleCount: ruleSet.ruleCount, keyCount: keys.length, resolve, reject, resent })
    })
    if (batch.pending.length >= this.maxRequests) {
      if (batch === this.single) this.single = undefined
      this.dispatch(batch)
    } else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.flush)
    }
    return outcomes
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
    const sentAt = performance.now()
    this.call(batch, sentAt, this.clock.notAfter(sentAt))
  }

  /** Sends `batch` with `notAfter` (see main.lua) and settles its requests with the reply. */
  private call(batch: Batch, sentAt: number, notAfter: number | ''): void {
    const { pending } = batch
    const args: (string | number)[] = [this.extraTtlMs, notAfter, batch.ruleSets.length]
    for (const arg of batch.setArgs) args.push(arg)
    for (const arg of batch.requestArgs) args.push(arg)
    const replied = () => {
      for (const request of pending) request.resent?.()
    }
    let sent: Promise<unknown>
    try {
      sent = this.send(scriptForMask(batch.mask), batch.keys, args, replied)
    } catch (error) {
      sent = Promise.reject(error)
    }
    sent.then(
      (reply) => this.settle(pending, reply, sentAt),
      (error: unknown) => {
        const lateAt = redisTimeOf(error, 'SLUICELATE')
        if (lateAt === undefined || notAfter === '') {
          for (const request of pending) request.reject(error)
          return
        }
        // Nothing was charged. A reply back this soon means the clocks moved, not the call: once more, with no
        // deadline. Else Redis ran it past its deadline (it was held or redirected, or it waited behind a burst).
        const now = performance.now()
        if (this.clock.wasStep(lateAt, sentAt, now)) return this.call(batch, sentAt, '')
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
      },
    )
  }

  /** Gives each request of a batch its entry of `reply`, and learns the Redis clock from its last number. */
  private settle(pending: readonly Pending[], reply: unknown, sentAt: number): void {
    const unexpected = () => new Error(`sluice: unexpected reply from the Redis script: ${JSON.stringify(reply)}`)
    if (!Array.isArray(reply) || reply.length === 0) {
      for (const request of pending) request.reject(unexpected())
      return
    }
    const end = reply.length - 1
    this.clock.sample(Number(reply[end]), sentAt)
    let at = 0
    for (const request of pending) {
      const entry: unknown = reply[at]
      const fields = FIELDS_PER_RULE * request.ruleCount
      // A string is the error of this request alone (see main.lua); else five numbers per rule.
      if (typeof entry === 'string') {
        request.reject(new Error(entry))
        at++
      } else if (at + fields <= end) {
        request.resolve(outcomesAt(reply, at, request.ruleCount))
        at += fields
      } else {
        request.reject(unexpected())
      }
    }
  }
}

const FIELDS_PER_RULE = 5

/** What the script answers for one rule: its outcome, and for a rule that refused, how long its key stays blocked. */
export interface ScriptOutcome extends Outcome {
  /** The rest of the key's block (the rule's `block`) in ms, when the rule refused; 0 when it admitted or none runs. */
  readonly blockLeftMs: number
}

/**
 * The outcomes of a request whose entry starts at `at` of the reply, five numbers per rule: allowed (1 | 0), remaining,
 * reset_ms, retry_after_ms (-1 = never), and delay_ms (admitted) or the rest of the block (refused).
 */
function outcomesAt(reply: readonly unknown[], at: number, ruleCount: number): ScriptOutcome[] {
  const outcomes: ScriptOutcome[] = []
  for (let i = at; i < at + FIELDS_PER_RULE * ruleCount; i += FIELDS_PER_RULE) {
    const allowed = reply[i] === 1
    const retryAfterMs = Number(reply[i + 3])
    const last = Number(reply[i + 4])
    outcomes.push({
      allowed,
      remaining: Number(reply[i + 1]),
      resetMs: Number(reply[i + 2]),
      retryAfterMs: retryAfterMs === -1 ? Number.POSITIVE_INFINITY : retryAfterMs,
      delayMs: allowed ? last : 0,
      blockLeftMs: allowed ? 0 : last,
    })
  }
  return outcomes
}
