import type { CalendarPeriod } from '@sluice/core/store'
import type { Mode, Plan } from './plan'
import { type Script, scriptForMask } from './script'
import { keySlot } from './slot'

/**
 * The most requests one call evaluates, so that one batch never holds Redis (which runs one script at a time) long,
 * and a burst's replies come back in several calls: each reply is evidence that Redis is answering (see
 * deadlines.ts), and one reply for hundreds of decisions made a starved machine look like a silent Redis.
 */
export const MAX_BATCH_REQUESTS = 64

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

/** One request of a batch: where its reply goes, and whom to tell that it is sent again (after NOSCRIPT). */
interface Pending {
  /** How many rules it has: its entry of the reply is five numbers per rule. */
  readonly ruleCount: number
  readonly resolve: (entry: unknown[]) => void
  readonly reject: (error: unknown) => void
  readonly replied: (() => void) | undefined
}

/** The requests of one turn for one connection (one slot on a Cluster), as one call's keys and arguments. */
class Batch {
  readonly keys: string[] = []
  /** Each distinct rule set once: its rule count, then its rules' arguments (see main.lua). */
  readonly setArgs: (string | number)[] = []
  readonly sets = new Map<Plan, number>()
  /** Per request: its rule set (from 1), mode, cost, and now ('' = Redis's clock). */
  readonly requestArgs: (string | number)[] = []
  readonly pending: Pending[] = []
  mask = 0
  setCount = 0

  /** The number of the rule set of `plan` in this batch; a calendar set has its own boundaries, so its own entry. */
  setOf(plan: Plan, aroundMs: number): number {
    const known = plan.calendar ? undefined : this.sets.get(plan)
    if (known !== undefined) return known
    const { setArgs } = this
    setArgs.push(plan.ruleCount)
    for (const arg of plan.ruleArgs) {
      if (typeof arg === 'string') setArgs.push(arg)
      else setArgs.push(...(arg as CalendarPeriod).boundariesAround(aroundMs))
    }
    this.mask |= plan.codeMask
    this.setCount++
    if (!plan.calendar) this.sets.set(plan, this.setCount)
    return this.setCount
  }
}

/**
 * Coalesces the decisions of one turn of the event loop: the requests that arrive before it ends go to Redis as one
 * script call that decides them all in arrival order (on a Cluster, one call per slot, since a call's keys must share
 * one), and each reply goes back to its request. A request waits for no company: the batch is sent in the check phase
 * of the turn it was made in (setImmediate, no timer), after the poll phase has handed every request that arrived
 * with it (HTTP requests arrive one I/O callback each, and a microtask would send each alone); or at once when it
 * reaches {@link MAX_BATCH_REQUESTS}.
 *
 * @example
 * const batches = new Batches(send, false, 0)
 * const entry = await batches.add(plan, ['sluice:default:fw:{42}'], 1, 'charge', '', Date.now(), undefined)
 */
export class Batches {
  private readonly open = new Map<number, Batch>()
  private scheduled = false

  constructor(
    private readonly send: Send,
    private readonly cluster: boolean,
    /** How much longer than its logical expiry a key lives (the tests' replay clock only). */
    private readonly extraTtlMs: number,
  ) {}

  /**
   * Adds a request to its batch: `keys` are its rules' keys and block keys, `now` the instant it is decided at (''
   * for Redis's clock), `aroundMs` the time a calendar rule's boundaries are sent around. Settles with its entry of
   * the reply (five numbers per rule), or with the error the script gave for this request alone, or the call's.
   */
  add(
    plan: Plan,
    keys: readonly string[],
    cost: number,
    mode: Mode,
    now: number | '',
    aroundMs: number,
    replied: (() => void) | undefined,
  ): Promise<unknown[]> {
    const group = this.cluster ? keySlot(keys[0] as string) : 0
    let batch = this.open.get(group)
    if (batch === undefined) {
      batch = new Batch()
      this.open.set(group, batch)
    }
    const set = batch.setOf(plan, aroundMs)
    for (let i = 0; i < keys.length; i++) batch.keys.push(keys[i] as string)
    batch.requestArgs.push(set, mode, cost, now)
    const entry = new Promise<unknown[]>((resolve, reject) => {
      ;(batch as Batch).pending.push({ ruleCount: plan.ruleCount, resolve, reject, replied })
    })
    if (batch.pending.length >= MAX_BATCH_REQUESTS) {
      this.open.delete(group)
      this.dispatch(batch)
    } else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.flush)
    }
    return entry
  }

  private readonly flush = (): void => {
    this.scheduled = false
    const batches = [...this.open.values()]
    this.open.clear()
    for (const batch of batches) this.dispatch(batch)
  }

  private dispatch(batch: Batch): void {
    const { pending } = batch
    const args: (string | number)[] = [this.extraTtlMs, batch.setCount]
    for (const arg of batch.setArgs) args.push(arg)
    for (const arg of batch.requestArgs) args.push(arg)
    const replied = () => {
      for (const request of pending) request.replied?.()
    }
    let sent: Promise<unknown>
    try {
      sent = this.send(scriptForMask(batch.mask), batch.keys, args, replied)
    } catch (error) {
      sent = Promise.reject(error)
    }
    sent.then(
      (reply) => {
        const unexpected = () => new Error(`sluice: unexpected reply from the Redis script: ${JSON.stringify(reply)}`)
        if (!Array.isArray(reply)) {
          for (const request of pending) request.reject(unexpected())
          return
        }
        let at = 0
        for (const request of pending) {
          const entry: unknown = reply[at]
          // A string is the error of this request alone (see main.lua); else five numbers per rule.
          if (typeof entry === 'string') {
            request.reject(new Error(entry))
            at++
          } else if (at + 5 * request.ruleCount <= reply.length) {
            request.resolve(reply.slice(at, at + 5 * request.ruleCount))
            at += 5 * request.ruleCount
          } else {
            request.reject(unexpected())
          }
        }
      },
      (error: unknown) => {
        for (const request of pending) request.reject(error)
      },
    )
  }
}
