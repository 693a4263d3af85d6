// The three entries of @sluice/core, pinned: adding a name to packages/core/src/index.ts, store-index.ts or
// internal-index.ts (or an `export *` that brings one along) fails here until the name is added below on purpose, and
// so does dropping one. Applications import @sluice/core; store authors' names are @sluice/core/store (the README's
// "Writing a store"), the adapters' shared plumbing @sluice/core/internal (docs/adapters.md).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import * as core from '../src'
import * as internal from '../src/internal-index'
import * as store from '../src/store-index'

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
  SluiceErrorCode Diagnostic DiagnosticCode
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

// @sluice/core/store, by the README's groups: the contract; deciding as MemoryStore does; keys; the core's stores and
// the lease algorithms; option checks, errors and warnings.
const STORE = {
  types: `
    CalendarPeriod StoreEvent Decision Outcome CompiledRule BindOptions BoundStore DecisionTrace FailurePolicy Store
    EventKeys Logger Step LeaseOutcome LeaseScope LeaseStore LeaseTable
  `,
  values: `
    decisionOf algorithms isBucket refunds committed evaluateRules floorDiv KeySpaces longKeyDigest MAX_KEPT_KEY_LENGTH
    keyHash acquireLeases MemoryLeaseStore renewLeases MemoryStore checkBoolean checkFunction checkObject checkOneOf
    checkTimerMs checkWholeNumber warnEach describeValue InvalidOptionError StoreKeyError StoreUnavailableError
    checkLogger
  `,
}

// @sluice/core/internal, as docs/adapters.md lists it.
const INTERNAL = {
  types: `
    HttpAdapter HttpPolicy HttpVerdict RequestFacts RequestPolicy ResponseEvents ResponseLifecycle VerdictWriter
  `,
  values: `
    clientIpKey createConcurrencyPolicy createHttpPolicy createShedPolicy ipKey JSON_CONTENT_TYPE named
    rateLimitHandle writeVerdict describeValue
  `,
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).sort()

/** Every name a source entry exports, types included, as tsc sees it. */
function exportedNames(entry: string): string[] {
  const file = join(__dirname, '..', 'src', entry)
  const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true, types: ['node'] })
  const checker = program.getTypeChecker()
  const module = checker.getSymbolAtLocation(program.getSourceFile(file) as ts.SourceFile) as ts.Symbol
  return checker
    .getExportsOfModule(module)
    .map((symbol) => symbol.name)
    .sort()
}

test('@sluice/core exports exactly its public names, types included', () => {
  expect(exportedNames('index.ts')).toEqual([...PUBLIC].sort())
})

test('@sluice/core has exactly its public values at run time', () => {
  expect(Object.keys(core).sort()).toEqual([...VALUES].sort())
})

test.each([
  ['@sluice/core/store', 'store-index.ts', STORE, store],
  ['@sluice/core/internal', 'internal-index.ts', INTERNAL, internal],
])('%s exports exactly the names its page documents, types included', (_entry, file, { types, values }, loaded) => {
  expect(exportedNames(file)).toEqual(words(`${types} ${values}`))
  expect(Object.keys(loaded).sort()).toEqual(words(values))
})

/** The names a page documents: each `name` (or `name(...)`) in the lines from `start` to the next blank line or heading. */
function documentedNames(file: string, start: string, pick: (line: string) => string = (line) => line): string[] {
  const lines = readFileSync(join(__dirname, '..', '..', '..', file), 'utf8').split('\n')
  const first = lines.findIndex((line) => line.includes(start))
  expect(first).toBeGreaterThan(-1)
  const section: string[] = []
  for (const line of lines.slice(first + 1)) {
    if (line.startsWith('#') || (line.trim() === '' && section.length > 0)) break
    section.push(pick(line))
  }
  const names = [...section.join('\n').matchAll(/`([A-Za-z_]\w*)[`(]/g)].map((match) => match[1] as string)
  return [...new Set(names)].sort()
}

test('the README of @sluice/core lists exactly what @sluice/core/store exports', () => {
  expect(
    documentedNames('packages/core/README.md', '`@sluice/core/store` (`test/exports.test.ts` pins the list)'),
  ).toEqual(exportedNames('store-index.ts'))
})

test('docs/adapters.md lists exactly what @sluice/core/internal exports, in its table', () => {
  const firstCell = (line: string) => (line.startsWith('| `') ? (line.split('|')[1] ?? '') : '')
  expect(documentedNames('docs/adapters.md', '## The surface', firstCell)).toEqual(exportedNames('internal-index.ts'))
})
