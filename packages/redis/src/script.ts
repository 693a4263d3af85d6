import { createHash } from 'node:crypto'
import fixedWindow from './lua/fixed-window.lua'
import leakyBucket from './lua/leaky-bucket.lua'
import leakyQueue from './lua/leaky-queue.lua'
import main from './lua/main.lua'
import math from './lua/math.lua'
import slidingLog from './lua/sliding-log.lua'
import slidingWindow from './lua/sliding-window.lua'
import tokenBucket from './lua/token-bucket.lua'

/**
 * The one script every request runs: the integer helpers, the six algorithms (each in its own file, beside the
 * TypeScript it mirrors) and the entry point that dispatches per rule. One script means one EVALSHA per request
 * however many rules are stacked, and one SHA to load.
 */
export const SCRIPT: string = [math, fixedWindow, slidingLog, slidingWindow, tokenBucket, leakyBucket, leakyQueue, main]
  .map((part) => part.trimEnd())
  .join('\n\n')

/** The SHA1 that `SCRIPT LOAD` answers for {@link SCRIPT}, and that EVALSHA names. */
export const SCRIPT_SHA: string = createHash('sha1').update(SCRIPT).digest('hex')
