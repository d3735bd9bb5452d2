import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { chainHash } from '../../src/messages/asks/audit/service.ts'
import { GENESIS_HASH } from '../../src/messages/asks/audit/store.ts'
import type { Block, Message } from '../../src/messages/schema.ts'
import { type Reply, startTestServer, type TestServer } from '../harness.ts'

/**
 * Issue 31, item 4: what the person is asked to approve is fixed once sent (its title, text and
 * every block: 409 on any change, open or answered), the approval history shows what the audit
 * recorded at the time, and deleting an approval is recorded as a withdrawal, its earlier lines
 * kept. Every request goes through the real server's routes.
 */

let s: TestServer
beforeEach(async () => {
  s = await startTestServer()
})
afterEach(() => s.close())

const TITLE = 'Run the migration'
const TEXT = 'Applies schema 15 to the staging database.'
const approval: Block = {
  type: 'approval',
  id: 'act',
  tool: 'Bash',
  input: { command: 'bun run migrate --env staging' },
  summary: 'migrate staging',
}

async function ask(blocks: Block[] = [approval], proof = false): Promise<Message> {
  const r = await s.request('POST', '/v1/messages', {
    token: s.agentToken,
    json: { body: { title: TITLE, text: TEXT, blocks }, ...(proof ? { proof: true } : {}) },
  })
  expect(r.status).toBe(200)
  return r.body.message as Message
}

const agent = (method: string, path: string, json?: unknown) =>
  s.request(method, path, { token: s.agentToken, json })

const answer = (id: string, value: unknown) =>
  s.request('POST', `/v1/app/messages/${id}/answer`, {
    token: s.personToken,
    origin: null,
    json: { answer: value },
  })

interface HistoryLine {
  message_id: string
  status: string
  by: string
  was?: string
  title?: string
  summary?: string
  text?: string
  answer?: unknown
}

async function history(): Promise<HistoryLine[]> {
  const r = await s.request('GET', `/v1/app/channels/${s.channelId}/approvals`, {
    token: s.personToken,
    origin: null,
  })
  expect(r.status).toBe(200)
  return r.body.approvals
}

/** The message's body as the person's feed shows it now. */
async function bodyNow(id: string): Promise<unknown> {
  const { messages } = await s.person.feed(s.channelId, { since: 0 })
  const found = messages.find((m) => m.id === id)
  return found && 'body' in found ? found.body : undefined
}

function conflict(reply: Reply, what: string): void {
  if (reply.status !== 409)
    throw new Error(`${what}: expected 409, got ${reply.status}: ${reply.text}`)
  expect(typeof reply.body.error).toBe('string')
}

/** Each change an agent could try on a sent approval, as PATCH and PUT bodies. */
const CHANGES: [string, string, unknown][] = [
  ['PATCH', 'title', { title: 'Reviewed and approved by security' }],
  ['PATCH', 'text', { text: 'Reviewed and approved by security' }],
  ['PATCH', 'title removed', { title: null }],
  [
    'PATCH',
    'a block added',
    { blocks: [{ type: 'markdown', text: '**Approved by security**' }, approval] },
  ],
  ['PATCH', 'a block patched', { block_patches: { act: { summary: 'harmless' } } }],
  [
    'PUT',
    'the body replaced, action the same',
    { body: { title: 'Reviewed and approved by security', text: TEXT, blocks: [approval] } },
  ],
]

describe('PATCH/PUT /v1/messages/:id on an approval: its whole body is fixed once sent', () => {
  for (const state of ['open', 'answered'] as const) {
    test(`${state}: every change is 409 and the body stays as sent`, async () => {
      const q = await ask()
      if (state === 'answered') expect((await answer(q.id, { decision: 'deny' })).status).toBe(200)
      const sent = await bodyNow(q.id)
      for (const [method, what, json] of CHANGES) {
        conflict(await agent(method, `/v1/messages/${q.id}`, json), `${state}: ${what}`)
      }
      expect(await bodyNow(q.id)).toEqual(sent)
    })
  }

  test('a question asked with proof (its answer is signed and audited) is fixed the same way', async () => {
    const q = await ask([{ type: 'confirm', id: 'ok', label: 'Deploy' }], true)
    conflict(
      await agent('PATCH', `/v1/messages/${q.id}`, { title: 'Approved already' }),
      'proof question title',
    )
  })

  test('an ordinary question and a message can still be edited', async () => {
    const q = await ask([{ type: 'confirm', id: 'ok', label: 'Go' }])
    expect((await agent('PATCH', `/v1/messages/${q.id}`, { title: 'Better title' })).status).toBe(
      200,
    )
    const m = (await agent('POST', '/v1/messages', { body: { text: 'hi' } })).body.message
    expect((await agent('PATCH', `/v1/messages/${m.id}`, { text: 'hello' })).status).toBe(200)
  })
})

describe('the approval history shows what was recorded at the time', () => {
  test('an answered approval records the title, text and summary the person saw', async () => {
    const q = await ask()
    await answer(q.id, { decision: 'allow' })
    const [line] = await history()
    expect(line).toMatchObject({
      message_id: q.id,
      status: 'answered',
      title: TITLE,
      summary: 'migrate staging',
    })
    // The log itself holds the text too (the history page leaves it out: it may be long).
    const entry = JSON.parse(
      (s.ctx.db.query('SELECT entry FROM audit_log').get() as { entry: string }).entry,
    )
    expect(entry).toMatchObject({ title: TITLE, text: TEXT, summary: 'migrate staging' })
  })

  test('the history reads the log, not the message: a body changed under it does not move the line', async () => {
    const q = await ask()
    await answer(q.id, { decision: 'allow' })
    // As an edit made before bodies were fixed, or a write to the database, would leave it.
    const forged = { title: 'Reviewed and approved by security', blocks: [approval] }
    s.ctx.db.run('UPDATE messages SET body = ?1 WHERE id = ?2', [JSON.stringify(forged), q.id])
    const [line] = await history()
    expect(line).toMatchObject({ title: TITLE, summary: 'migrate staging' })
  })

  test('deleting an answered approval keeps its line, as recorded, and adds the deletion', async () => {
    const q = await ask()
    await answer(q.id, { decision: 'allow' })
    expect((await agent('DELETE', `/v1/messages/${q.id}`)).status).toBe(200)
    const lines = await history()
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatchObject({
      message_id: q.id,
      status: 'deleted',
      was: 'answered',
      by: 'agent',
      title: TITLE,
      summary: 'migrate staging',
    })
    expect(lines[1]).toMatchObject({
      message_id: q.id,
      status: 'answered',
      answer: { decision: 'allow' },
      title: TITLE,
      summary: 'migrate staging',
    })
  })

  test('deleting an open approval is recorded as its withdrawal', async () => {
    const q = await ask()
    expect((await agent('DELETE', `/v1/messages/${q.id}`)).status).toBe(200)
    expect(await history()).toEqual([
      expect.objectContaining({
        message_id: q.id,
        status: 'deleted',
        was: 'open',
        by: 'agent',
        title: TITLE,
        summary: 'migrate staging',
      }),
    ])
  })

  test('deleting an ordinary message or question records nothing; the chain stays whole', async () => {
    const m = (await agent('POST', '/v1/messages', { body: { text: 'hi' } })).body.message
    const plain = await ask([{ type: 'confirm', id: 'ok', label: 'Go' }])
    const q = await ask()
    await agent('DELETE', `/v1/messages/${m.id}`)
    await agent('DELETE', `/v1/messages/${plain.id}`)
    await answer(q.id, { decision: 'deny' })
    await agent('DELETE', `/v1/messages/${q.id}`)
    const rows = s.ctx.db
      .query<{ entry: string; prev_hash: string; hash: string }, []>(
        'SELECT entry, prev_hash, hash FROM audit_log ORDER BY seq',
      )
      .all()
    expect(rows.map((r) => JSON.parse(r.entry).status)).toEqual(['answered', 'deleted'])
    let prev = GENESIS_HASH
    for (const r of rows) {
      expect(r.prev_hash).toBe(prev)
      expect(r.hash).toBe(chainHash(prev, r.entry))
      prev = r.hash
    }
  })
})
