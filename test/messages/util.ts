import { expect } from 'bun:test'
import type { Block, DeletedMessage, Message } from '../../src/messages/schema.ts'
import { failsWith, type TestServer } from '../harness.ts'

/** A raw JSON request as the agent, for bodies the typed client would not let us write. */
export const agentCall = (s: TestServer, method: string, path: string, json?: unknown) =>
  s.agent.call<{ message: Message }>(method, path, json === undefined ? {} : { json })

/** `POST /v1/messages` with any JSON at all. */
export const post = (s: TestServer, json: unknown) => agentCall(s, 'POST', '/v1/messages', json)

/**
 * Everything a write could leave behind: every message row as stored, and the global change
 * counter (which a write takes even when it only re-stamps a row).
 */
export function snapshot(s: TestServer) {
  return {
    rows: s.ctx.db.query('SELECT * FROM messages ORDER BY rid').all(),
    seq: (
      s.ctx.db.query("SELECT value FROM counters WHERE name = 'change_seq'").get() as {
        value: number
      }
    ).value,
  }
}

/**
 * Runs a request expected to fail with `status` (400 by default) and proves it wrote nothing:
 * the stored rows and the change counter are the same before and after, and the agent's feed
 * (peeking, so the check itself writes nothing) has no change past the old cursor.
 */
export async function rejects(
  s: TestServer,
  request: () => Promise<unknown>,
  status: number,
  field?: string | null,
) {
  const before = snapshot(s)
  const head = (await s.agent.feed({ peek: true })).cursor
  const e = await failsWith(request(), status)
  expect(typeof e.error).toBe('string')
  expect(e.error.length).toBeGreaterThan(0)
  if (field !== undefined) expect(e.field ?? null).toBe(field)
  expect(snapshot(s)).toEqual(before)
  const after = await s.agent.feed({ since: head, peek: true })
  expect(after).toEqual({ messages: [], cursor: head, has_more: false })
  return e
}

/** A 400 naming `field`, with nothing written. */
export const invalid = (s: TestServer, request: () => Promise<unknown>, field: string | null) =>
  rejects(s, request, 400, field)

/** The whole feed as the agent sees it now, without marking anything seen. */
export async function allMessages(s: TestServer): Promise<(Message | DeletedMessage)[]> {
  return (await s.agent.feed({ peek: true })).messages
}

/** One live message as the feed holds it now. */
export async function current(s: TestServer, id: string): Promise<Message> {
  const found = (await allMessages(s)).find((m) => m.id === id)
  if (!found || 'deleted' in found) throw new Error(`message ${id} is not in the feed`)
  return found as Message
}

/** A display-only message body: two blocks with ids, one without. */
export const board = (): Block[] => [
  { type: 'heading', id: 'h', text: 'Build' },
  { type: 'progress', id: 'p', value: 1, max: 10, label: 'steps' },
  { type: 'markdown', text: 'no id here' },
]

/**
 * The edit tests' requests and messages (edit.test.ts, edit-errors.test.ts), on the file's
 * current server, read at every call: the files start a fresh server per test.
 */
export function editCalls(server: () => TestServer) {
  return {
    put: (id: string, json: unknown) => agentCall(server(), 'PUT', `/v1/messages/${id}`, json),
    async sendBoard(): Promise<Message> {
      return (
        await server().agent.send({ body: { title: 'T', text: 'body text', blocks: board() } })
      ).message
    },
    async sendQuestion(extra: object = {}): Promise<Message> {
      const body = {
        text: 'Pick',
        blocks: [
          { type: 'markdown', id: 'intro', text: 'Choose wisely' },
          { type: 'choice', id: 'c', options: [{ label: 'A' }, { label: 'B' }] },
        ],
      }
      return (await server().agent.send({ body, ...extra })).message
    },
  }
}
