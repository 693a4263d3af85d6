import type { StoreClient } from './client'
import { NodeHealth, type NodeOptions } from './health'
import { keySlot } from './slot'

/** What {@link Nodes} reads of a client: on a Cluster, its slot map and how to refresh it. */
export type NodeMap = Pick<StoreClient, 'isCluster' | 'masterOf' | 'refreshSlots'>

/** The options every node shares; each node adds its label and the hooks of this map. */
export type SharedNodeOptions = Omit<NodeOptions, 'label' | 'inCluster' | 'refresh' | 'route' | 'onAway' | 'onBack'>

// Before the first slot map arrives a Cluster client has no address for any slot.
const NO_SLOT_MAP = 'not yet mapped'

/**
 * The nodes a store's calls go to, each with its own health: one for a single Redis; on a Cluster, one per master
 * address, found by the slot of a call's first key in the client's slot map (the node the client sends it to). A master
 * that fails takes down its own keys only; the keys of the others go on being decided by Redis.
 *
 * @example
 * const node = nodes.forKey('sluice:default:sw:{user:42}')
 * const outcome = await node.call(key, (resent) => runner.run(ruleSet, [key], 1, 'charge', resent))
 */
export class Nodes {
  private readonly single: NodeHealth | undefined
  private readonly byAddress = new Map<string, NodeHealth>()
  private readonly away = new Set<NodeHealth>()

  constructor(
    private readonly client: NodeMap,
    private readonly options: SharedNodeOptions,
  ) {
    if (!client.isCluster) this.single = this.create('Redis', false)
  }

  /** The node that serves `redisKey`; sends the probes that are due, for every node that is away. */
  forKey(redisKey: string): NodeHealth {
    this.tick()
    if (this.single !== undefined) return this.single
    const address = this.addressOf(redisKey)
    let node = this.byAddress.get(address)
    if (node === undefined) {
      node = this.create(`Redis Cluster node ${address}`, true)
      this.byAddress.set(address, node)
    }
    return node
  }

  /**
   * Sends the probes that are due, for every node that is away: on every request, including those answered without a
   * call (the short-circuit). A failed master's keys may now live elsewhere, so its probe cannot wait for requests to
   * map to it.
   */
  tick(): void {
    if (this.away.size > 0) for (const node of this.away) node.tick()
  }

  /** Every node known so far. */
  all(): Iterable<NodeHealth> {
    return this.single !== undefined ? [this.single] : this.byAddress.values()
  }

  private addressOf(redisKey: string): string {
    return this.client.masterOf(keySlot(redisKey)) ?? NO_SLOT_MAP
  }

  private create(label: string, inCluster: boolean): NodeHealth {
    return new NodeHealth({
      ...this.options,
      label,
      inCluster,
      // The client follows a failover only once it learns the new slot map; it asks for it on MOVED, which a node that
      // stopped answering never sends.
      refresh: () => this.client.refreshSlots(),
      route: (key) => (inCluster ? this.addressOf(key) : label),
      onAway: (node) => this.away.add(node),
      onBack: (node) => this.away.delete(node),
    })
  }
}
