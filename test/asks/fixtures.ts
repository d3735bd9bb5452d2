import type { Block, Message, SendRequest } from '../../src/messages/schema.ts'
import { type TestServer, until } from '../harness.ts'

/** Sends a question made of `blocks` from the first channel's agent. */
export async function question(
  s: TestServer,
  blocks: Block[],
  extra: Omit<SendRequest, 'body'> = {},
): Promise<Message> {
  const { message } = await s.agent.send({ body: { text: 'A question', blocks }, ...extra })
  return message
}

/** Milliseconds a promise takes from now; for generous upper bounds only. */
export async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  const value = await promise
  return { value, ms: performance.now() - started }
}

/** Tracks whether a promise has settled yet, without consuming its outcome. */
export function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false
  promise.then(
    () => {
      done = true
    },
    () => {
      done = true
    },
  )
  return { promise, settled: () => done }
}

/** The feed's current cursor, read with peek so nothing gets marked seen. */
export async function cursorNow(s: TestServer): Promise<number> {
  return (await s.agent.feed({ since: 0, peek: true, limit: 200 })).cursor
}

/** A free-text input: the simplest question. */
export const text: Block = { type: 'text_input', id: 'why' }

/** Until exactly `n` polls are held on the server. */
export const parked = (s: TestServer, n: number) => until(() => s.ctx.waiters.size === n)
