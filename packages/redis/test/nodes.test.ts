// The nodes of a store and their separate health, on a slot map (the master of each slot, as the client knows it). The calls here are plain
// promises: what is tested is which node a key belongs to and what one node's outage does to the others.
import { Unanswered } from '../src/health'
import { type NodeMap, Nodes, type SharedNodeOptions } from '../src/nodes'
import { keySlot } from '../src/slot'

const A = 'sluice:default:sw:{alice}'
const B = 'sluice:default:sw:{bob}'
const UNMAPPED = 'sluice:default:sw:{carol}'

const refused = () => Promise.reject(new Error('connect ECONNREFUSED'))

function setUp(map: NodeMap) {
  const log = { warnings: [] as string[], infos: [] as string[], probes: [] as string[] }
  // What a probe gets: refused, answered, or nothing at all (sent to a master that stopped), or a reply of the test's.
  let reply: () => Promise<unknown> = refused
  const options: SharedNodeOptions = {
    timeoutMs: 100,
    backstopMs: 3000,
    probeIntervalMs: 0,
    logger: { warn: (m) => log.warnings.push(m), error: () => {}, info: (m) => log.infos.push(m) },
    onError: 'closed',
    duringOutage: 'rejecting',
    probe: (key) => {
      log.probes.push(key)
      return reply()
    },
    newLocal: undefined,
  }
  return {
    nodes: new Nodes(map, options),
    log,
    answerProbes: () => (reply = () => Promise.resolve(1)),
    hangProbes: () => (reply = () => new Promise(() => {})),
    /** The next probes wait until the test answers them with the function given to `answer`. */
    holdProbes: (answer: (settle: (value: unknown) => void) => void) =>
      (reply = () => new Promise((resolve) => answer(resolve))),
  }
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

test('a probe that hangs on a stopped master does not hold up the next: once the slot map sends the slot to the promoted replica, a probe goes there and ends the outage', async () => {
  const { map, slots, refreshes } = clusterMap()
  const { nodes, log, hangProbes, answerProbes } = setUp(map)
  hangProbes()
  await nodes.forKey(A).call(A, refused)
  nodes.forKey(B) // a request: the first probe goes to the stopped master, and waits there
  await settle()
  expect(log.probes).toEqual([A])
  // While it waits and the slot map is unchanged, no second probe joins it; the slot map is asked for again instead.
  const asked = refreshes()
  nodes.forKey(B) // a request, which lets a due probe go
  await settle()
  expect(log.probes).toEqual([A])
  expect(refreshes()).toBe(asked + 1)
  // The replica takes over and answers.
  slots[keySlot(A)] = ['127.0.0.1:7003']
  answerProbes()
  nodes.forKey(B) // a request, which lets a due probe go
  await settle()
  expect(log.probes).toEqual([A, A])
  expect(log.infos).toHaveLength(1)
  expect(log.infos[0]).toMatch(/^sluice: the keys of Redis Cluster node 127\.0\.0\.1:7000 are answered again/)
})

test("a probe's answer ends only the outage it was sent in", async () => {
  const { map, slots } = clusterMap()
  const { nodes, log, holdProbes, answerProbes } = setUp(map)
  const failed = nodes.forKey(A)
  await failed.call(A, refused)
  // The first outage's probe waits; the slot moves, and a second probe ends the outage.
  let late: (value: unknown) => void = () => {}
  holdProbes((settle) => (late = settle))
  nodes.forKey(B) // a request, which lets a due probe go
  slots[keySlot(A)] = ['127.0.0.1:7003']
  answerProbes()
  nodes.forKey(B) // a request, which lets a due probe go
  await settle()
  expect(log.infos).toHaveLength(1)
  // A new outage begins; the first probe's answer, arriving now, is no news of it.
  await failed.call(A, refused)
  expect(log.warnings).toHaveLength(2)
  late(1)
  await settle()
  expect(log.infos).toHaveLength(1)
  expect(await failed.call(A, () => Promise.resolve('never sent'))).toBeInstanceOf(Unanswered)
})
