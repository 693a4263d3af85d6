import {
  ClientClosedError,
  ClientOfflineError,
  ErrorReply,
  MaxCommandRedirectionsError,
  SocketClosedUnexpectedlyError,
} from 'redis'
import { CallExpired } from '../src/deadlines'
import { errorCode, keyProblem, reachOf } from '../src/errors'

// Error replies as Redis 7 and ioredis word them.
test.each([
  ['SLUICEKEY 2 holds a list', 'key'],
  ['WRONGTYPE Operation against a key holding the wrong kind of value script: 1ed15d0c, on @user_script:130.', 'key'],
  ['TRYAGAIN Multiple keys request during rehashing of slot', 'slot'],
  [
    'Too many Cluster redirections. Last error: ReplyError: TRYAGAIN Multiple keys request during rehashing of slot',
    'slot',
  ],
  ['Too many Cluster redirections. Last error: ReplyError: MOVED 3999 127.0.0.1:7002', 'slot'],
  ['ASK 3999 127.0.0.1:7002', 'slot'],
  ['LOADING Redis is loading the dataset in memory', 'node'],
  ['BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.', 'node'],
  ["READONLY You can't write against a read only replica. script: 1ed15d0c, on @user_script:94.", 'node'],
  ['MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.', 'node'],
  ['CLUSTERDOWN Hash slot not served', 'node'],
  ['CLUSTERDOWN The cluster is down', 'node'],
  ["OOM command not allowed when used memory > 'maxmemory'. script: 1ed15d0c, on @user_script:94.", 'node'],
  ['MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.', 'node'],
  ['NOSCRIPT No matching script. Please use EVAL.', 'node'],
  ['NOAUTH Authentication required.', 'node'],
  ['Connection is closed.', 'node'],
  ['connect ECONNREFUSED 127.0.0.1:6379', 'node'],
  ["Stream isn't writeable and enableOfflineQueue options is false", 'node'],
  ['ERR unknown command', 'node'],
])('%s: %s', (message, reach) => {
  expect(reachOf(new Error(message))).toBe(reach)
})

test('a deadline says itself how far it reaches', () => {
  expect(reachOf(new CallExpired('Redis answered later calls but not this one within 100 ms', 'slot'))).toBe('slot')
  expect(reachOf(new CallExpired('Redis did not answer within 100 ms', 'node'))).toBe('node')
  expect(reachOf('not an error')).toBe('node')
})

test('the code of a reply error, also inside "Too many Cluster redirections"', () => {
  expect(errorCode(new Error('NOSCRIPT No matching script. Please use EVAL.'))).toBe('NOSCRIPT')
  expect(
    errorCode(new Error('Too many Cluster redirections. Last error: ReplyError: NOSCRIPT No matching script')),
  ).toBe('NOSCRIPT')
  expect(errorCode(new Error('Too many Cluster redirections. Last error: Error: Connection is closed.'))).toBe('')
  expect(errorCode(new Error('Connection is closed.'))).toBe('')
  expect(errorCode(undefined)).toBe('')
})

test('a key error names the rule (counting from 0 here) and what the key holds', () => {
  expect(keyProblem(new Error('SLUICEKEY 2 holds a list'))).toEqual({ index: 1, holds: 'holds a list' })
  expect(keyProblem(new Error('SLUICEKEY 1 holds 5 bytes that are no state of this algorithm'))).toEqual({
    index: 0,
    holds: 'holds 5 bytes that are no state of this algorithm',
  })
  // A bare WRONGTYPE (a script of another version) names no rule: the first.
  expect(keyProblem(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toEqual({
    index: 0,
    holds: 'holds a value of the wrong type',
  })
})

test("node-redis's errors are classified as ioredis's: its reply errors by their code, also inside its redirection error", () => {
  expect(reachOf(new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe('key')
  expect(reachOf(new ErrorReply('SLUICEKEY 1 holds a list'))).toBe('key')
  expect(reachOf(new ErrorReply('TRYAGAIN Multiple keys request during rehashing of slot'))).toBe('slot')
  expect(errorCode(new ErrorReply('NOSCRIPT No matching script. Please use EVAL.'))).toBe('NOSCRIPT')
  // node-redis gives up on a key after maxCommandRedirections MOVED/ASK replies, the last one as the cause.
  expect(reachOf(new MaxCommandRedirectionsError(new ErrorReply('MOVED 3999 127.0.0.1:7002')))).toBe('slot')
  expect(reachOf(new MaxCommandRedirectionsError(new ErrorReply('ASK 3999 127.0.0.1:7002')))).toBe('slot')
  expect(reachOf(new ErrorReply('CLUSTERDOWN Hash slot not served'))).toBe('node')
  // A connection that is down, or dropped with the call on it, concerns the node.
  expect(reachOf(new ClientOfflineError())).toBe('node')
  expect(reachOf(new ClientClosedError())).toBe('node')
  expect(reachOf(new SocketClosedUnexpectedlyError())).toBe('node')
})
