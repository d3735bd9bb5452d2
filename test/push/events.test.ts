import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { ChannelRow } from '../../src/channels/store.ts'
import type { Event } from '../../src/core/events.ts'
import { cancelAsk } from '../../src/messages/asks/service.ts'
import type { Block } from '../../src/messages/schema.ts'
import { deleteRow, sendMessage } from '../../src/messages/service.ts'
import type { MessageRow } from '../../src/messages/store.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

// Pushes and the audit react to the events a unit emits (core/events.ts, server/reactions.ts):
// `message.created` queues the pushes, `ask.settled` and `message.deleted` append to the audit
// log, inside the emitting unit. So what a reaction wrote is durable with the unit, and a unit
// that fails (after the send, the decision or the deletion it made) leaves no push row and no
// audit row behind. The push worker is stopped: the queue is counted, not emptied by sends.
let f: PushFixture
let channel: ChannelRow

beforeEach(async () => {
  f = await startPushServer()
  await f.subscribe('phone')
  f.s.ctx.push.stop()
  channel = (await f.s.ctx.store.channels.byId(f.s.channelId)) as ChannelRow
})
afterEach(() => f.close())

const queued = async () => await f.s.ctx.store.push.queued()
const audited = async () => (await f.s.ctx.store.audit.page(0, 100)).length
const messages = () =>
  (f.s.ctx.db.query('SELECT count(*) AS n FROM messages').get() as { n: number }).n

const approval: Block = { type: 'approval', id: 'a', tool: 'Bash', input: { command: 'ls' } }

async function ask(): Promise<MessageRow> {
  return await sendMessage(f.s.ctx, channel, 'agent', { body: { blocks: [approval] } })
}

/** Runs `work` in a unit that then fails, and expects that failure back. */
async function inFailingUnit(work: () => Promise<unknown>): Promise<void> {
  const unit = f.s.ctx.writes.run(async () => {
    await work()
    throw new Error('the unit fails after its work')
  })
  await expect(unit).rejects.toThrow('the unit fails after its work')
}

describe('events a unit emits: the reactions are part of the unit', () => {
  test('POST /v1/messages: the push is queued with the message (message.created)', async () => {
    await sendMessage(f.s.ctx, channel, 'agent', { body: { text: 'hello' } })
    expect(await queued()).toBe(1)
    // A silent message and the person's own are created too, and pushed to no one.
    await sendMessage(f.s.ctx, channel, 'agent', { body: { text: 'quiet' }, silent: true })
    await sendMessage(f.s.ctx, channel, 'human', { body: { text: 'mine' } })
    expect(await queued()).toBe(1)
  })

  test('a unit that fails after its send leaves no message and no push row', async () => {
    const before = messages()
    await inFailingUnit(() =>
      sendMessage(f.s.ctx, channel, 'agent', { body: { text: 'taken back' } }),
    )
    expect(await queued()).toBe(0)
    expect(messages()).toBe(before)
  })

  test('a unit that fails after settling an approval leaves it open and no audit row', async () => {
    const row = await ask()
    await inFailingUnit(() => cancelAsk(f.s.ctx, channel, row.id))
    expect(await audited()).toBe(0)
    expect((await f.s.ctx.store.messages.byId(row.id))?.ask_status).toBe('open')
    // The same cancel in a unit that stands is on the record (ask.settled).
    await cancelAsk(f.s.ctx, channel, row.id)
    expect(await audited()).toBe(1)
  })

  test('a unit that fails after deleting an approval keeps it and writes no audit row', async () => {
    const row = await ask()
    await inFailingUnit(() => deleteRow(f.s.ctx, row))
    expect(await audited()).toBe(0)
    expect((await f.s.ctx.store.messages.byId(row.id))?.deleted_at).toBeNull()
    await deleteRow(f.s.ctx, row)
    expect(await audited()).toBe(1)
  })

  test('a reaction that fails fails the unit that emitted: no message, no push', async () => {
    const before = messages()
    f.s.ctx.writes.reactions.on('message.created', (_tx: unknown, _event: Event) => {
      throw new Error('a reaction failed')
    })
    const send = sendMessage(f.s.ctx, channel, 'agent', { body: { text: 'refused' } })
    await expect(send).rejects.toThrow('a reaction failed')
    expect(await queued()).toBe(0)
    expect(messages()).toBe(before)
  })
})
