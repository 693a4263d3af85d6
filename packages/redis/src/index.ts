export type { FailurePolicy, Logger } from '@sluice/core'
export type { IoredisClient, NodeRedisClient, NodeRedisScriptOptions } from './client'
export { type RedisLeaseClient, RedisLeaseStore, type RedisLeaseStoreOptions } from './lease-store'
export { RedisStore, type RedisStoreClient, type RedisStoreOptions } from './redis-store'
