import type { Decision, RuleDecision } from '../rules/decision'
import type { CompiledRule } from '../rules/rules'
import { namedChannel } from '../runtime/builtins'
import type { DecisionTrace } from '../store/store'
import { StoreKeyError, StoreUnavailableError } from '../util/errors'
import { type EventKeys, keyHash } from '../util/key-hash'
import type { DecisionEvent, RuleDecisionEvent, StoreRequestFailedEvent } from './event-types'

// The channels are looked up by name, so every copy of @sluice/core in a process (an ESM and a CommonJS build, two
// versions under different packages) publishes on the same ones, and a subscriber sees all of them.
const decisionChannel = namedChannel('sluice:decision')
const storeChannel = namedChannel('sluice:store')

/** What {@link observeDecision} needs of the limiter. */
export interface DecisionContext {
  readonly rules: readonly CompiledRule[]
  readonly eventKeys: EventKeys
  /** The limiter's `label` (default: its prefix), as the events' `limiter`. */
  readonly limiter: string
}

/**
 * Whether anyone listens for what a limiter publishes: when not, the limiter takes its one quiet path and builds
 * nothing.
 *
 * @example
 * if (!observed()) return bound.apply(keys, cost, charge)
 */
export function observed(): boolean {
  return decisionChannel.hasSubscribers || storeChannel.hasSubscribers
}

/**
 * Runs `apply` with a trace, measures the store, and publishes the decision (or the store's failure).
 *
 * @example
 * return observeDecision(context, 'consume', keys, cost, (trace) => bound.apply(keys, cost, true, trace))
 */
export function observeDecision(
  context: DecisionContext,
  operation: DecisionEvent['operation'],
  keys: readonly string[],
  cost: number,
  apply: (trace: DecisionTrace) => Promise<Decision>,
): Promise<Decision> {
  const trace: DecisionTrace = { source: 'store' }
  const startedAt = performance.now()
  return apply(trace).then(
    (decision) => {
      if (decisionChannel.hasSubscribers) {
        const storeLatencyMs = performance.now() - startedAt
        decisionChannel.publish(decisionEvent(context, operation, keys, cost, decision, trace, storeLatencyMs))
      }
      return decision
    },
    (error: unknown) => {
      if (storeChannel.hasSubscribers) publishFailure(context, keys, error, performance.now() - startedAt)
      throw error
    },
  )
}

function decisionEvent(
  { rules, eventKeys, limiter }: DecisionContext,
  operation: DecisionEvent['operation'],
  keys: readonly string[],
  cost: number,
  decision: Decision,
  trace: DecisionTrace,
  storeLatencyMs: number,
): DecisionEvent {
  const perRule: readonly RuleDecision[] = decision.rules ?? [decision]
  return {
    operation,
    limiter,
    prefix: (rules[0] as CompiledRule).prefix,
    allowed: decision.allowed,
    rule: decision.rule,
    cost,
    rules: perRule.map((d, i) => new RuleEvent(d, keys[i] as string, eventKeys)),
    source: trace.source,
    storeLatencyMs,
    decision,
  }
}

/**
 * One rule's part of a decision event. Its `keyHash` is worked out when first read: hashing costs more than the rest
 * of the message, and a subscriber that only counts never reads it. `toJSON` includes it, so a logged message has it.
 */
class RuleEvent implements RuleDecisionEvent {
  readonly rule: string
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly retryAfterMs: number
  // Declared only: the property exists when the key is published, and is absent (not undefined) otherwise.
  declare readonly key?: string
  #key: string
  #keyHash: string | undefined

  constructor(d: RuleDecision, key: string, eventKeys: EventKeys) {
    this.rule = d.rule
    this.allowed = d.allowed
    this.limit = d.limit
    this.remaining = d.remaining
    this.retryAfterMs = d.retryAfterMs
    if (eventKeys === 'raw') this.key = key
    this.#key = key
  }

  get keyHash(): string {
    this.#keyHash ??= keyHash(this.#key)
    return this.#keyHash
  }

  toJSON(): RuleDecisionEvent {
    return { ...this, keyHash: this.keyHash }
  }
}

function publishFailure(
  { rules, eventKeys, limiter }: DecisionContext,
  keys: readonly string[],
  error: unknown,
  storeLatencyMs: number,
): void {
  const isKeyError = error instanceof StoreKeyError
  if (!isKeyError && !(error instanceof StoreUnavailableError)) return
  const index = isKeyError
    ? Math.max(
        0,
        rules.findIndex((rule) => rule.name === error.rule),
      )
    : 0
  const key = keys[index] as string
  const event: StoreRequestFailedEvent = {
    type: isKeyError ? 'key-error' : 'unavailable',
    limiter,
    prefix: (rules[0] as CompiledRule).prefix,
    rule: (rules[index] as CompiledRule).name,
    keyHash: keyHash(key),
    ...(eventKeys === 'raw' ? { key } : {}),
    error,
    storeLatencyMs,
  }
  storeChannel.publish(event)
}
