import { HarkError } from '../errors.ts'

/** Longest pause between two pieces of an upload's body (like nginx's `client_body_timeout`). */
export const BODY_STALL_MS = 30_000

/**
 * The chunks of a streamed body, cut with 408 when none comes for `stallMs`. Bun's own idle
 * timer does not count body bytes as activity (a steady 10 KiB/s upload was cut at ~32 s), so
 * an upload turns it off (`streamOpen`) and is watched here instead: slow is fine, stalled is not.
 */
export async function* stallGuarded(
  body: ReadableStream<Uint8Array>,
  stallMs = BODY_STALL_MS,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader()
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined
      const stalled = new Promise<'stalled'>((resolve) => {
        timer = setTimeout(() => resolve('stalled'), stallMs)
      })
      const next = await Promise.race([reader.read(), stalled]).finally(() => clearTimeout(timer))
      if (next === 'stalled') {
        throw new HarkError(408, `the upload stalled: no data for ${stallMs / 1000} s`, undefined, {
          connection: 'close',
        })
      }
      if (next.done) return
      yield next.value
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}
