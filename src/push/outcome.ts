/** What a push service's answer to one send means for the queue (push/worker.ts). */

/** How a send ended, and what the queue does about it. */
export type Outcome =
  | { kind: 'sent' }
  | { kind: 'retry'; retryAfterMs?: number; why: string }
  /** Signed with a VAPID pair replaced since: again now with the new one, no attempt counted. */
  | { kind: 'resign' }
  | { kind: 'gone' }
  | { kind: 'drop'; why: string }
  /** The push service refused our VAPID signature (401/403). */
  | { kind: 'refused'; status: number }
  /** Its message was deleted (or its channel) while the push waited: nothing to say any more. */
  | { kind: 'stale'; why: string }
  /** The device's keys are no P-256 point and 16-byte secret: no push can ever reach it. */
  | { kind: 'badKeys'; why: string }

/** `Retry-After` in seconds or as an HTTP date, in ms from now. */
function retryAfterMs(header: string | null, now: number): number | undefined {
  if (!header) return undefined
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** The outcome a push service's answer (its body already read) says. */
export function outcomeOf(response: Response): Outcome {
  const status = response.status
  if (status >= 200 && status < 300) return { kind: 'sent' }
  if (status === 404 || status === 410) return { kind: 'gone' }
  if (status === 429 || status >= 500) {
    return {
      kind: 'retry',
      why: `HTTP ${status}`,
      retryAfterMs: retryAfterMs(response.headers.get('retry-after'), Date.now()),
    }
  }
  if (status === 401 || status === 403) return { kind: 'refused', status }
  if (status >= 300 && status < 400)
    return { kind: 'drop', why: `redirect (HTTP ${status}) not followed` }
  return { kind: 'drop', why: `HTTP ${status}` }
}
