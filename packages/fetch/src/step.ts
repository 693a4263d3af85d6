import type { Decision } from '@sluice/core'

/** How an adapter reads its framework's request: the Web request under it, and its path. */
export interface RequestReader<Req> {
  request(req: Req): Request
  path(req: Req): string
  /** What the server handed over beside the request, for the default `ip`. */
  env(req: Req, env: unknown): unknown
}

/** What a limit or a protection decided for one request: answer it now, or run the handler and finish its response. */
export type Step =
  | { readonly done: true; readonly response: Response }
  | {
      readonly done: false
      /** A rate limit's decision, for the handler; undefined when skipped, uncounted, or for a protection. */
      readonly decision: Decision | undefined
      /** The handler's response, with the step's headers and watched to its end. */
      finish(response: Response): Response
      /** The handler threw. */
      fail(): void
    }

/** A rate limit or a protection of a fetch adapter, built once: `decide` runs per request. */
export interface FetchProtection<Req> {
  decide(req: Req, env: unknown): Promise<Step>
}
