import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { HarkError } from '../../src/core/errors.ts'
import { deleteRow, editRow, replaceRow } from '../../src/messages/service.ts'
import type { MessageRow } from '../../src/messages/store.ts'
import { startTestServer, type TestServer } from '../harness.ts'

/**
 * An edit or a delete decides on the row as its own unit finds it, not as it was looked up:
 * with several instances, another one may change or delete the message in between (here the
 * "in between" is made deterministic: the row is looked up, then changed, then the edit runs
 * with the row it looked up). On Postgres the unit reads it after the person's lock
 * (`forChange`, test/stores/messages.test.ts races it).
 */
let s: TestServer
beforeEach(async () => {
  s = await startTestServer()
})
afterEach(async () => {
  await s.close()
})

const channel = async () => {
  const row = await s.ctx.store.channels.byId(s.channelId)
  if (!row) throw new Error('no channel')
  return row
}
const rowOf = async (id: string): Promise<MessageRow> => {
  const row = await s.ctx.store.messages.byId(id)
  if (!row) throw new Error(`no message ${id}`)
  return row
}
const status = async (work: Promise<unknown>) =>
  await work.then(
    () => 200,
    (error: unknown) => (error instanceof HarkError ? error.status : 500),
  )

describe('changes decided on the row their unit finds', () => {
  test('an edit looked up before a delete does not give the deleted message its body back', async () => {
    const { message } = await s.agent.send({ body: { text: 'secret plan' } })
    const looked = await rowOf(message.id)
    await deleteRow(s.ctx, looked)
    expect(await status(editRow(s.ctx, await channel(), looked, { text: 'edited' }))).toBe(404)
    expect(await status(replaceRow(s.ctx, await channel(), looked, { text: 'again' }))).toBe(404)
    const after = await rowOf(message.id)
    expect(after.deleted_at).not.toBeNull()
    expect(after.body).toBeNull()
  })

  test('a block patch applies to the body as it is now, not as it was looked up', async () => {
    const { message } = await s.agent.send({
      body: { title: 'Build', blocks: [{ type: 'progress', id: 'p', value: 1, max: 10 }] },
    })
    const looked = await rowOf(message.id)
    // Meanwhile (another instance): the title changed.
    await editRow(s.ctx, await channel(), looked, { title: 'Build #2' })
    const patched = await editRow(s.ctx, await channel(), looked, {
      block_patches: [{ id: 'p', value: 5 }],
    })
    const body = JSON.parse(patched.body as string)
    expect(body.title).toBe('Build #2')
    expect(body.blocks[0].value).toBe(5)
  })

  test('an open question looked up, answered meanwhile: its inputs no longer change (409)', async () => {
    const { message } = await s.agent.send({
      body: { text: 'Deploy?', blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] },
    })
    const looked = await rowOf(message.id)
    await s.person.answer(message.id, true)
    const changed = editRow(s.ctx, await channel(), looked, {
      blocks: [{ type: 'confirm', id: 'go', label: 'Go now' }],
    })
    expect(await status(changed)).toBe(409)
    expect((await rowOf(message.id)).ask_status).toBe('answered')
  })

  test('a second delete with the row looked up before the first: 404, one deletion', async () => {
    const { message } = await s.agent.send({ body: { text: 'twice' } })
    const looked = await rowOf(message.id)
    await deleteRow(s.ctx, looked)
    const seq = (await rowOf(message.id)).seq
    expect(await status(deleteRow(s.ctx, looked))).toBe(404)
    expect((await rowOf(message.id)).seq).toBe(seq)
  })
})
