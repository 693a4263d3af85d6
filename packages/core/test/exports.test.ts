// The public API of @sluice/core, pinned: adding a name to packages/core/src/index.ts (or an `export *` that brings
// one along) fails here until the name is added below on purpose. Store authors' names live in @sluice/core/store,
// the adapters' shared plumbing in @sluice/core/internal.
import { join } from 'node:path'
import ts from 'typescript'
import * as core from '../src'

const PUBLIC = `
  AdaptiveLimitOptions AddressListOption AdmissionRequest AlgorithmName BucketAlgorithmName CalendarPeriodName
  CompiledRule ConcurrencyLimiter ConcurrencyLimiterOptions Decision Duration DurationUnit FailurePolicy
  HeaderMode HeadersOption HttpCommonOptions HttpConcurrencyOptions HttpLimitOptions HttpQuotaLimitOptions
  HttpRateBucketLimitOptions HttpRuleDefaults HttpRuleOptions HttpShedOptions HttpStackedBucketLimitOptions
  HttpStackedLimitOptions HttpWindowLimitOptions InheritedBucketRuleOptions InsideEachRule InvalidOptionError IpKeyOptions
  KeyFunction Limiter LimiterCommonOptions LimiterOptions Logger MemoryLeaseStore
  MemoryStore MemoryStoreOptions NotWithPeriod NotWithRules PRIORITIES Priority QueueOrder QuotaLimiterOptions
  QuotaRuleOptions RateBucketLimiterOptions RateBucketRuleOptions RateLimitError RateLimitHandle RateNeedsABucket
  RequestLimit RequestWindow RuleDecision RuleKey RuleLimits RuleOptions ShedEvent ShedReason Shedder
  ShedderOptions Slot StackedBucketLimiterOptions StackedLimiterOptions Store StoreKeyError StoreUnavailableError
  Ticket TimeZoneNeedsAPeriod Timers WindowLimiterOptions WindowRuleOptions createConcurrencyLimiter createLimiter
  createShedder parseDuration
  DecisionEvent DecisionSource EventKeys RuleDecisionEvent StoreEvent StoreFallbackEvent StoreOutageEvent
  StoreRecoveredEvent StoreRequestFailedEvent keyHash
  SluiceErrorCode
`
  .split(/\s+/)
  .filter(Boolean)

// The values among them: what `require('@sluice/core')` has.
const VALUES = [
  'InvalidOptionError',
  'MemoryLeaseStore',
  'MemoryStore',
  'PRIORITIES',
  'RateLimitError',
  'StoreKeyError',
  'StoreUnavailableError',
  'createConcurrencyLimiter',
  'createLimiter',
  'createShedder',
  'keyHash',
  'parseDuration',
]

test('@sluice/core exports exactly its public names, types included', () => {
  const index = join(__dirname, '..', 'src', 'index.ts')
  const program = ts.createProgram([index], { strict: true, noEmit: true, skipLibCheck: true, types: ['node'] })
  const checker = program.getTypeChecker()
  const module = checker.getSymbolAtLocation(program.getSourceFile(index) as ts.SourceFile) as ts.Symbol
  const names = checker.getExportsOfModule(module).map((symbol) => symbol.name)
  expect(names.sort()).toEqual([...PUBLIC].sort())
})

test('@sluice/core has exactly its public values at run time', () => {
  expect(Object.keys(core).sort()).toEqual([...VALUES].sort())
})
