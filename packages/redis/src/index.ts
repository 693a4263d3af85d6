export {
  type FailurePolicy,
  RedisStore,
  type RedisStoreClient,
  type RedisStoreLogger,
  type RedisStoreOptions,
} from './redis-store'
