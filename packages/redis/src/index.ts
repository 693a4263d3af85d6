export type { FailurePolicy, Logger } from '@sluice/core'
export { RedisStore, type RedisStoreClient, type RedisStoreOptions } from './redis-store'
