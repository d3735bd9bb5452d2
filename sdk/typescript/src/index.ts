/**
 * @hark/client: the Hark agent API from Node 18+, Bun, Deno or a browser, with no dependencies.
 * See README.md for the fastest path.
 */
export * as blocks from './blocks.ts'
export {
  type CallOptions,
  type FeedOptions,
  Hark,
  type HarkOptions,
  type InboxOptions,
  MAX_WAIT_SECONDS,
  type SendOptions,
  type WaitOptions,
} from './client.ts'
export { HarkError } from './errors.ts'
export {
  type FetchLike,
  type RetryOptions,
  sleep,
  Transport,
  type TransportOptions,
} from './http.ts'
export * from './types.ts'
export { type PollOptions, pollUntil } from './wait.ts'
