/**
 * Long waits: the SDK's one wait loop (`pollUntil`, sdk/typescript/src/wait.ts), which polls
 * through outages until the deadline and tells `onOutage` when the server is lost and back.
 */

/** How long a wait may last, whom to tell about outages meanwhile, and what ends it early. */
export type { WaitOptions } from '../../sdk/typescript/src/client.ts'
export { type PollOptions, pollUntil } from '../../sdk/typescript/src/wait.ts'

export const deadlineAfter = (timeoutMs: number | undefined) =>
  timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs
