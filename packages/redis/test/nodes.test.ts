// The nodes of a store and their separate health, on a slot map (the master of each slot, as the client knows it). The calls here are plain
// promises: what is tested is which node a key belongs to and what one node's outage does to the others.
import { Unanswered } from '../src/health'
import { type NodeMap, Nodes, type SharedNodeOptions } from '../src/nodes'
import { keySlot } from '../src/slot'

const A = 'sluice:default:sw:{alice}'
const B = 'sluice:default:sw:{bob}'
const UNMAPPED = 'sluice:default:sw:{carol}'

function setUp(map: NodeMap) {
  const log = { warnings: [] as string[], infos: [] as string[], probes: [] as string[] }
  let probeAnswers = false
  const options: SharedNodeOptions = {
    timeoutMs: 100,
    backstopMs: 3000,
    probeIntervalMs: 0,
    logger: { warn: (m) => log.warnings.push(m), error: () => {}, info: (m) => log.infos.push(m) },
    onError: 'closed',
    duringOutage: 'rejecting',
    probe: (key) => {
      log.probes.push(key)
      return probeAnswers ? Promise.resolve(1) : Promise.reject(new Error('connect ECONNREFUSED'))
    },
    newLocal: undefined,
  }
  return { nodes: new Nodes(map, options), log, answerProbes: () => (probeAnswers = true) }
}

function clusterMap() {
  const slots: (string[] | undefined)[] = []
  slots[keySlot(A)] = ['127.0.0.1:7000', '127.0.0.1:7003']
  slots[keySlot(B)] = ['127.0.0.1:7001', '127.0.0.1:7004']
  let refreshes = 0
  const map: NodeMap = {
    isCluster: true,
    masterOf: (slot) => slots[slot]?.[0],
    refreshSlots: () => {
      refreshes++
    },
  }
  return { map, slots, refreshes: () => refreshes }
}

const refused = () => Promise.reject(new Error('connect ECONNREFUSED'))
/** Lets the calls and probes under way settle (their deadlines' bookkeeping included). */
const settle = () => new Promise((resolve) => setImmediate(resolve))

test('a single Redis is one node for every key', () => {
  const { nodes } = setUp({ isCluster: false, masterOf: () => undefined, refreshSlots: () => {} })
  expect(nodes.forKey(A)).toBe(nodes.forKey(B))
  expect([...nodes.all()]).toHaveLength(1)
})

test("on a Cluster each master is a node of its own, found by the key's slot; a key with no master yet, one more", () => {
  const { map } = clusterMap()
  const { nodes } = setUp(map)
  expect(nodes.forKey(A)).not.toBe(nodes.forKey(B))
  expect(nodes.forKey(A)).toBe(nodes.forKey('sluice:login:fw:{alice}'))
  expect(nodes.forKey(UNMAPPED)).not.toBe(nodes.forKey(A))
  expect([...nodes.all()]).toHaveLength(3)
})

test("one master's outage is its own: the other master's keys go on being decided", async () => {
  const { map, refreshes } = clusterMap()
  const { nodes, log } = setUp(map)
  expect(await nodes.forKey(A).call(A, refused)).toBeInstanceOf(Unanswered)
  expect(refreshes()).toBe(1) // the client is asked for the slot map at once: a replica may take over
  expect(await nodes.forKey(B).call(B, () => Promise.resolve('decided'))).toBe('decided')
  expect(await nodes.forKey(A).call(A, () => Promise.resolve('never sent'))).toBeInstanceOf(Unanswered)
  expect(log.warnings).toEqual([
    'sluice: Redis Cluster node 127.0.0.1:7000 is unavailable (connect ECONNREFUSED); rejecting for its keys until it answers again',
  ])
})

test('after a failover moves its slots, the failed node is probed on its own key, and recovers once that is answered', async () => {
  const { map, slots } = clusterMap()
  const { nodes, log, answerProbes } = setUp(map)
  const failed = nodes.forKey(A)
  await failed.call(A, refused)
  // The replica takes over: the slot map now sends alice's slot to it, which answers.
  slots[keySlot(A)] = ['127.0.0.1:7003']
  expect(await nodes.forKey(A).call(A, () => Promise.resolve('by the new master'))).toBe('by the new master')
  await settle()
  expect(log.probes.at(-1)).toBe(A) // the probe went for the slot that failed, not a PING anywhere
  expect(log.infos).toEqual([])
  answerProbes()
  nodes.forKey(B) // any request lets a due probe go
  await settle()
  expect(log.infos).toHaveLength(1)
  expect(log.infos[0]).toMatch(
    /^sluice: the keys of Redis Cluster node 127\.0\.0\.1:7000 are answered again after \d+ ms; decisions come from Redis again$/,
  )
  expect(await failed.call(A, () => Promise.resolve('back'))).toBe('back')
})
