import { describeValue, InvalidOptionError } from '@sluice/core/store'

/**
 * An ioredis `Redis` or `Cluster`, as far as the stores use it: `evalsha`, `eval` and `del`; a Cluster's `slots` map
 * (which master serves a slot) and `refreshSlotsCache` (learn that map again after a master stopped answering).
 * Written out rather than imported, so that a node-redis user's types need no ioredis.
 *
 * @example
 * const client: IoredisClient = new Cluster([{ host: '10.0.0.5', port: 7000 }])
 */
export interface IoredisClient {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  del(...keys: string[]): Promise<unknown>
  readonly isCluster?: boolean
  /** Per slot, the addresses of its master and replicas ('host:port'). */
  readonly slots?: readonly (readonly string[] | undefined)[]
  refreshSlotsCache?(callback?: (error?: Error | null) => void): void
  readonly options?: object
  /** 'wait' until a lazy client (`lazyConnect`) first connects; 'end' once it was closed (`quit`, `disconnect`). */
  readonly status?: string
}

/**
 * The arguments of node-redis's `evalSha` and `eval`: the keys apart from the rest, all as strings.
 *
 * @example
 * await client.evalSha(sha, { keys: ['sluice:default:sw:{42}'], arguments: ['charge', '', '0', '1'] })
 */
export interface NodeRedisScriptOptions {
  keys: string[]
  arguments: string[]
}

/**
 * A node-redis (`redis` 4 to 6) client from `createClient()` or cluster from `createCluster()`, as far as the stores
 * use it: `evalSha`, `eval` and `del`; a cluster's `slots` (which master serves a slot), `masters` (which tells a
 * cluster from a client) and, for the warning about risky options, a client's `options` or a cluster's `_options`.
 *
 * @example
 * const client: NodeRedisClient = await createClient({ disableOfflineQueue: true }).connect()
 */
export interface NodeRedisClient {
  evalSha(sha: string, options: NodeRedisScriptOptions): Promise<unknown>
  eval(script: string, options: NodeRedisScriptOptions): Promise<unknown>
  del(keys: string[]): Promise<unknown>
  readonly options?: object | undefined
  /** False once the client or cluster was closed (`quit`, `destroy`), and before `connect`. */
  readonly isOpen?: boolean
  readonly masters?: readonly unknown[]
  readonly slots?: readonly ({ readonly master?: { readonly address?: string } } | undefined)[]
  /** node-redis 5 and 6: the same client, its commands sent with these options (`timeout`: 0 = none). */
  withCommandOptions?(options: { timeout: number }): Pick<NodeRedisClient, 'evalSha' | 'eval' | 'del'>
}

/**
 * What the stores ask of a client, whichever library made it, in the calling convention of ioredis (the keys'
 * count, then the keys and the arguments).
 */
export interface StoreClient {
  readonly library: 'ioredis' | 'node-redis'
  readonly isCluster: boolean
  /** The client as given: its options are read once (see `client-options.ts`). */
  readonly given: object
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  eval(source: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
  del(...keys: string[]): Promise<unknown>
  /** On a Cluster, the address ('host:port') of the master that serves `slot`, as the client sends it there. */
  masterOf(slot: number): string | undefined
  /** On a Cluster, asks for the slot map again (a replica may have taken over a master that stopped answering). */
  refreshSlots(): void
  /**
   * Whether the client was opened and not closed since. Off the decisions' path, the store sends nothing to a client
   * that is not: a closed one can only fail, and a lazy one (ioredis `lazyConnect`) connects on its first decision.
   */
  isOpen(): boolean
}

const EXPECTED = 'an ioredis Redis or Cluster, or a node-redis client or cluster'

/**
 * The client given to a store, whichever library made it, or an `InvalidOptionError` naming `client`. Neither
 * library is imported: ioredis has `evalsha`, node-redis has `evalSha`.
 *
 * @example
 * const client = storeClientOf(options.client) // throws unless ioredis or node-redis
 * await client.evalsha(sha, 1, 'sluice:default:sw:{42}', 'charge')
 */
export function storeClientOf(client: unknown): StoreClient {
  if (client === undefined) throw new InvalidOptionError('client', `is required: ${EXPECTED}`)
  const methods = typeof client === 'object' && client !== null ? (client as Record<string, unknown>) : {}
  if (['evalSha', 'eval', 'del'].every((name) => typeof methods[name] === 'function')) {
    return nodeRedis(client as NodeRedisClient)
  }
  if (['evalsha', 'eval', 'del'].every((name) => typeof methods[name] === 'function')) {
    return ioredis(client as IoredisClient)
  }
  throw new InvalidOptionError(
    'client',
    `must be ${EXPECTED} (with evalsha, eval and del, or node-redis's evalSha, eval and del) (got ${describeValue(client)})`,
  )
}

function ioredis(client: IoredisClient): StoreClient {
  return {
    library: 'ioredis',
    isCluster: client.isCluster === true,
    given: client,
    evalsha: (sha, numKeys, ...args) => client.evalsha(sha, numKeys, ...args),
    eval: (source, numKeys, ...args) => client.eval(source, numKeys, ...args),
    del: (...keys) => client.del(...keys),
    masterOf: (slot) => client.slots?.[slot]?.[0],
    // ioredis asks for the slot map on a MOVED reply only, which a node that stopped answering never sends.
    refreshSlots: () => client.refreshSlotsCache?.(() => {}),
    isOpen: () => client.status !== 'wait' && client.status !== 'end',
  }
}

/** node-redis takes only strings (or Buffers) as a command's arguments, and the keys apart from the rest. */
function scriptOptions(numKeys: number, args: readonly (string | number)[]): NodeRedisScriptOptions {
  const strings = args.map(String)
  return { keys: strings.slice(0, numKeys), arguments: strings.slice(numKeys) }
}

function nodeRedis(client: NodeRedisClient): StoreClient {
  const isCluster = Array.isArray(client.masters)
  // node-redis 6 fails a command 5 s after it was issued (`commandOptions.timeout`), counting the time it waits in the
  // client's own queue, which a burst this instance dispatches in one run fills before anything is written: a healthy
  // Redis then looked down. The store's own deadlines measure Redis and bound every call (see deadlines.ts); its calls
  // go without the client's timer. The client's other commands keep it.
  const calls = client.withCommandOptions?.({ timeout: 0 }) ?? client
  // node-redis 5 and 6 expose the cluster's slot map owner as `_slots`; 4 keeps it private (then a failover is
  // learnt on MOVED, or when a node's connection drops, only).
  const slotMap = (client as { readonly _slots?: { rediscover?(): Promise<void> } })._slots
  return {
    library: 'node-redis',
    isCluster,
    given: client,
    evalsha: (sha, numKeys, ...args) => calls.evalSha(sha, scriptOptions(numKeys, args)),
    eval: (source, numKeys, ...args) => calls.eval(source, scriptOptions(numKeys, args)),
    del: (...keys) => calls.del(keys),
    masterOf: (slot) => client.slots?.[slot]?.master?.address,
    refreshSlots: () => {
      slotMap?.rediscover?.().catch(() => {})
    },
    isOpen: () => client.isOpen !== false,
  }
}
