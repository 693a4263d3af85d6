// The code of docs/diagnostics.md: each region is a block of the doc, word for word (test/docs/code-blocks.test.ts),
// and `npm run typecheck` compiles this file, so the doc's code always builds.
import type { Diagnostic, Logger } from '@sluice/core'

/** A structured logger's two methods, as pino and its kind have them: the fields first, then the message. */
interface StructuredLog {
  warn(fields: object, message: string): void
  error(fields: object, message: string): void
}

export function structuredLogger(log: StructuredLog): Logger {
  // #region logger
  const logger: Logger = {
    warn: (message, note) => log.warn({ code: (note as Diagnostic | undefined)?.code }, message),
    error: (message, error) => log.error({ err: error }, message),
  }
  // #endregion logger
  return logger
}
