import {
  algorithms,
  type BoundStore,
  type CompiledRule,
  type Decision,
  decisionOf,
  type FailurePolicy,
  type Logger,
  type MemoryStore,
  type Outcome,
} from '@sluice/core/store'
import type { Redis } from 'ioredis'
import { applyBySlot, groupBySlot, pick } from './cluster'
import { AWAY, type Health } from './health'
import { redisKey, redisKeyPrefix } from './keys'
import type { Rejections } from './rejections'
import { blockKeys, type Mode, type Plan, planFor, type ScriptRunner } from './script-runner'

/** What every binding of one RedisStore shares. */
export interface RedisShared {
  readonly client: Pick<Redis, 'del'>
  readonly cluster: boolean
  readonly onError: FailurePolicy
  readonly runner: ScriptRunner
  readonly health: Health
  readonly rejections: Rejections
  /** The per-instance stand-in of `onError: 'local'`. */
  readonly local: MemoryStore | undefined
  /** This instance's time in ms (the replay clock in tests). */
  readonly now: () => number
  closed: boolean
}

// The local stand-in binds the same rules as the Redis binding, which has already reported any shared key space.
const ALREADY_REPORTED: Logger = { warn() {}, error() {} }

/**
 * A RedisStore bound to one limiter's rules: their key prefixes, their script and its arguments are worked out once,
 * here. Each request is one EVALSHA of that script (on a Cluster, one per slot its keys live in), unless the local
 * short-circuit already knows the answer or Redis is away and `onError` answers.
 */
export class RedisBinding implements BoundStore {
  private readonly prefixes: readonly string[]
  private readonly plan: Plan
  /** On a Cluster: the plans of the groups of rules whose keys share a slot, made as requests need them. */
  private readonly slotPlans = new Map<string, Plan>()
  private readonly local: BoundStore | undefined

  constructor(
    readonly rules: readonly CompiledRule[],
    private readonly shared: RedisShared,
  ) {
    this.prefixes = rules.map(redisKeyPrefix)
    this.plan = planFor(rules)
    this.local = shared.local?.bind(rules, { logger: ALREADY_REPORTED })
  }

  async apply(keys: readonly string[], cost: number, charge: boolean): Promise<Decision> {
    const { shared, rules } = this
    const redisKeys = this.redisKeys(keys)
    // Every Redis key ends with its only unescaped '}', so joining them without a separator is injective.
    const rejectionKey = redisKeys.length === 1 ? (redisKeys[0] as string) : redisKeys.join('')
    const known = shared.rejections.known(rejectionKey, cost, this)
    if (known !== undefined) return decisionOf(rules, known, cost)
    const outcomes = await shared.health.call(() => this.evaluate(redisKeys, cost, charge ? 'charge' : 'peek'))
    if (outcomes === AWAY) return this.fallback(keys, cost, charge)
    shared.rejections.remember(rejectionKey, cost, outcomes, this)
    return decisionOf(rules, outcomes, cost)
  }

  async refund(keys: readonly string[], cost: number): Promise<void> {
    const redisKeys = this.redisKeys(keys)
    this.shared.rejections.forget(redisKeys.join(''))
    const done = await this.shared.health.call(() =>
      this.bySlot(redisKeys, (group) => this.run(group, redisKeys, cost, 'refund')),
    )
    if (done !== AWAY) return
    if (this.shared.onError === 'closed') throw this.shared.health.unavailable()
    await this.local?.refund(keys, cost)
  }

  async reset(keys: readonly string[]): Promise<void> {
    const redisKeys = this.redisKeys(keys)
    this.shared.rejections.forget(redisKeys.join(''))
    await this.local?.reset(keys)
    const done = await this.shared.health.call(() =>
      this.bySlot(redisKeys, (group) => {
        const picked = pick(redisKeys, group)
        // The block keys go too: resetting a key lifts its block.
        return this.shared.client.del(...picked, ...blockKeys(this.planOf(group), picked))
      }),
    )
    if (done === AWAY && this.shared.onError === 'closed') throw this.shared.health.unavailable()
  }

  private redisKeys(keys: readonly string[]): string[] {
    if (this.shared.closed) throw new Error('sluice: this RedisStore is closed')
    const redisKeys: string[] = []
    for (let i = 0; i < this.prefixes.length; i++) {
      redisKeys.push(redisKey(this.prefixes[i] as string, keys[i] as string))
    }
    return redisKeys
  }

  /** One EVALSHA for all the rules, or on a Cluster one per slot, with refunds when a slot rejects. */
  private evaluate(redisKeys: readonly string[], cost: number, mode: Mode): Promise<readonly Outcome[]> {
    const groups = this.shared.cluster && redisKeys.length > 1 ? groupBySlot(redisKeys) : undefined
    if (groups === undefined || groups.length === 1) return this.shared.runner.run(this.plan, redisKeys, cost, mode)
    return applyBySlot(groups, mode, (group, groupMode) => this.run(group, redisKeys, cost, groupMode))
  }

  /** Runs `work` once per slot on a Cluster (once in all on a single Redis), in the order of the rules. */
  private async bySlot(redisKeys: readonly string[], work: (group: readonly number[]) => Promise<unknown>) {
    const groups = this.shared.cluster ? groupBySlot(redisKeys) : [this.rules.map((_, i) => i)]
    await Promise.all(groups.map(work))
  }

  private run(group: readonly number[], redisKeys: readonly string[], cost: number, mode: Mode) {
    return this.shared.runner.run(this.planOf(group), pick(redisKeys, group), cost, mode)
  }

  /** The plan of the rules at `group`: at most one per subset of the rules, so the map stays small. */
  private planOf(group: readonly number[]): Plan {
    if (group.length === this.rules.length) return this.plan
    const id = group.join(',')
    let plan = this.slotPlans.get(id)
    if (plan === undefined) {
      plan = planFor(pick(this.rules, group))
      this.slotPlans.set(id, plan)
    }
    return plan
  }

  private async fallback(keys: readonly string[], cost: number, charge: boolean): Promise<Decision> {
    const { onError, health, now } = this.shared
    if (onError === 'closed') throw health.unavailable()
    if (this.local !== undefined) return this.local.apply(keys, cost, charge)
    // 'open': admit, with the numbers of a key that has used nothing.
    const at = now()
    const outcomes = this.rules.map((rule) => algorithms[rule.algorithm](undefined, at, cost, rule, false))
    return decisionOf(this.rules, outcomes, cost)
  }
}
