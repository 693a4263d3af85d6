import {
  algorithms,
  type BoundStore,
  type CompiledRule,
  type Decision,
  type DecisionTrace,
  decisionOf,
  type EventKeys,
  type FailurePolicy,
} from '@sluice/core/store'
import type { StoreClient } from './client'
import { applyBySlot, groupBySlot, pick } from './cluster'
import { keyProblem, reachOf } from './errors'
import { Unanswered } from './health'
import type { KeyErrors } from './key-errors'
import { redisKey, redisKeyPrefix } from './keys'
import type { Nodes } from './nodes'
import { blockKeys, type Mode, type RuleSet, ruleSetOf } from './rule-set'
import type { ScriptRunner } from './script-runner'
import type { ShortCircuit } from './short-circuit'

/** What every binding of one RedisStore shares. */
export interface RedisShared {
  readonly client: Pick<StoreClient, 'del'>
  readonly cluster: boolean
  readonly onError: FailurePolicy
  readonly runner: ScriptRunner
  readonly nodes: Nodes
  readonly shortCircuit: ShortCircuit
  readonly keyErrors: KeyErrors
  /** This instance's time in ms (the replay clock in tests). */
  readonly now: () => number
  closed: boolean
}

/**
 * A RedisStore bound to one limiter's rules: their key prefixes, their script and its arguments are worked out once,
 * here. Each request is one EVALSHA of that script on the node that serves its keys (on a Cluster, one per slot its
 * keys live in), unless the local short-circuit already knows the answer or that node is away and `onError` answers.
 * A key whose state the script cannot use fails its request with a `StoreKeyError`, whatever `onError` says: it is
 * no outage, and a local count would hide it.
 */
export class RedisBinding implements BoundStore {
  private readonly prefixes: readonly string[]
  private readonly ruleSet: RuleSet
  /** The indexes of all the rules: the one group of a request whose keys share a slot. */
  private readonly everyRule: readonly number[]
  /** The groups of a request whose keys share a slot: every rule, as one group. */
  private readonly oneGroup: readonly (readonly number[])[]
  /** On a Cluster: the rule sets of the groups of rules whose keys share a slot, made as requests need them. */
  private readonly slotRuleSets = new Map<string, RuleSet>()

  constructor(
    readonly rules: readonly CompiledRule[],
    private readonly shared: RedisShared,
    /** How its errors show keys: the limiter's `eventKeys`. */
    private readonly eventKeys: EventKeys = 'hash',
  ) {
    this.prefixes = rules.map(redisKeyPrefix)
    this.ruleSet = ruleSetOf(rules)
    this.everyRule = rules.map((_, i) => i)
    this.oneGroup = [this.everyRule]
  }

  async apply(keys: readonly string[], cost: number, charge: boolean, trace?: DecisionTrace): Promise<Decision> {
    const { shared, rules } = this
    const redisKeys = this.redisKeys(keys)
    // Every Redis key ends with its only unescaped '}', so joining them without a separator is injective.
    const rejectionKey = redisKeys.length === 1 ? (redisKeys[0] as string) : redisKeys.join('')
    const known = shared.shortCircuit.known(rejectionKey, cost, this)
    if (known !== undefined) {
      // A request answered here is still a request: a node that is away gets its due probe.
      shared.nodes.tick()
      if (trace !== undefined) trace.source = 'short-circuit'
      return decisionOf(rules, known, cost)
    }
    const mode: Mode = charge ? 'charge' : 'peek'
    const groups = this.groupsOf(redisKeys)
    // No later than the script's instant: a rejection counted down from here ends no later than in Redis.
    const sentAt = shared.now()
    const outcomes =
      groups.length === 1
        ? await this.run(this.everyRule, keys, redisKeys, cost, mode)
        : await applyBySlot(groups, mode, (group, groupMode) => this.run(group, keys, redisKeys, cost, groupMode))
    if (outcomes instanceof Unanswered) {
      if (trace !== undefined) trace.source = 'fallback'
      return this.fallback(outcomes, keys, cost, charge)
    }
    shared.shortCircuit.learn(rejectionKey, redisKeys, rules, cost, charge, outcomes, this, sentAt)
    return decisionOf(rules, outcomes, cost)
  }

  async refund(keys: readonly string[], cost: number): Promise<void> {
    const redisKeys = this.redisKeys(keys)
    const { shortCircuit } = this.shared
    shortCircuit.touched(redisKeys)
    const answers = await Promise.all(
      this.groupsOf(redisKeys).map((group) => this.run(group, keys, redisKeys, cost, 'refund')),
    )
    // Again once the refund ran: a rejection that came back meanwhile predates it.
    shortCircuit.touched(redisKeys)
    const unanswered = answers.find((answer) => answer instanceof Unanswered)
    if (unanswered === undefined) return
    if (this.shared.onError === 'closed') throw unanswered.node.unavailable(unanswered)
    await unanswered.node.localFor(this.rules)?.refund(keys, cost)
  }

  async reset(keys: readonly string[]): Promise<void> {
    const { shared, rules } = this
    const redisKeys = this.redisKeys(keys)
    shared.shortCircuit.touched(redisKeys)
    for (const key of redisKeys) shared.keyErrors.forget(key)
    for (const node of shared.nodes.all()) await node.localFor(rules, false)?.reset(keys)
    const answers = await Promise.all(
      this.groupsOf(redisKeys).map((group) => {
        const groupKeys = pick(redisKeys, group)
        // The block keys go too: resetting a key lifts its block.
        const blocks = blockKeys(this.ruleSetFor(group), groupKeys)
        return shared.nodes
          .forKey(groupKeys[0] as string)
          .call(groupKeys[0] as string, () => shared.client.del(...groupKeys, ...blocks))
      }),
    )
    // Again once the keys are gone: a rejection that came back meanwhile predates the reset.
    shared.shortCircuit.touched(redisKeys)
    const unanswered = answers.find((answer) => answer instanceof Unanswered)
    if (unanswered !== undefined && shared.onError === 'closed') throw unanswered.node.unavailable(unanswered)
  }

  private redisKeys(keys: readonly string[]): string[] {
    if (this.shared.closed) throw new Error('sluice: this RedisStore is closed')
    const redisKeys: string[] = []
    for (let i = 0; i < this.prefixes.length; i++) {
      redisKeys.push(redisKey(this.prefixes[i] as string, keys[i] as string))
    }
    return redisKeys
  }

  /** The rules grouped by the slot of their keys: one group on a single Redis, or when the keys share a slot. */
  private groupsOf(redisKeys: readonly string[]): readonly (readonly number[])[] {
    return this.shared.cluster && redisKeys.length > 1 ? groupBySlot(redisKeys) : this.oneGroup
  }

  /** One call of the script for the rules at `group`, on the node that serves their slot. */
  private async run(
    group: readonly number[],
    keys: readonly string[],
    redisKeys: readonly string[],
    cost: number,
    mode: Mode,
  ) {
    const { nodes, runner } = this.shared
    const groupKeys = group === this.everyRule ? redisKeys : pick(redisKeys, group)
    const first = groupKeys[0] as string
    try {
      return await nodes
        .forKey(first)
        .call(first, (resent) => runner.run(this.ruleSetFor(group), groupKeys, cost, mode, resent))
    } catch (error) {
      if (reachOf(error) !== 'key') throw error
      // The script names the rule (within this call) whose key it could not use.
      const index = group[Math.min(group.length - 1, keyProblem(error).index)] as number
      throw this.shared.keyErrors.failed(
        error,
        this.rules[index] as CompiledRule,
        keys[index] as string,
        redisKeys[index] as string,
        this.eventKeys,
      )
    }
  }

  /** The rule set of the rules at `group`: at most one per subset of the rules, so the map stays small. */
  private ruleSetFor(group: readonly number[]): RuleSet {
    if (group.length === this.rules.length) return this.ruleSet
    const id = group.join(',')
    let ruleSet = this.slotRuleSets.get(id)
    if (ruleSet === undefined) {
      ruleSet = ruleSetOf(pick(this.rules, group))
      this.slotRuleSets.set(id, ruleSet)
    }
    return ruleSet
  }

  private async fallback(
    unanswered: Unanswered,
    keys: readonly string[],
    cost: number,
    charge: boolean,
  ): Promise<Decision> {
    const { onError, now } = this.shared
    if (onError === 'closed') throw unanswered.node.unavailable(unanswered)
    const local = unanswered.node.localFor(this.rules)
    if (local !== undefined) return local.apply(keys, cost, charge)
    // 'open': admit, with the numbers of a key that has used nothing.
    const at = now()
    const outcomes = this.rules.map((rule) => algorithms[rule.algorithm](undefined, at, cost, rule, false))
    return decisionOf(this.rules, outcomes, cost)
  }
}
