import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Progress } from '@modelcontextprotocol/sdk/types.js'
import type { Message } from '../../src/messages/schema.ts'
import { type LiveMcp, startMcp } from './live.ts'

/**
 * The waits of `hark mcp` as an MCP client sees them: progress notifications while a tool waits
 * for the person (when the client asked for them), and cancellation (`notifications/cancelled`,
 * sent by the SDK client when its signal aborts), which withdraws the question asked.
 */
let live: LiveMcp

beforeAll(async () => {
  live = await startMcp({
    // Progress every 0.2 s instead of 5, so a short wait shows several.
    HARK_MCP_PROGRESS_SECONDS: '0.2',
    HARK_ALLOW_UNSIGNED: '1',
    HARK_HOOK_WAIT: '30',
  })
})
afterAll(() => live.close())

/** The open question that was not open in `before`, once it appears. */
async function newQuestion(before: Set<string>): Promise<Message> {
  for (let i = 0; i < 400; i++) {
    const found = (await live.server.person.openAsks()).asks.find((m) => !before.has(m.id))
    if (found) return found
    await Bun.sleep(25)
  }
  throw new Error('nothing was asked')
}

const openIds = async () => new Set((await live.server.person.openAsks()).asks.map((m) => m.id))

/** The question as the person's feed has it, once `ready` holds. */
async function questionWhen(id: string, ready: (m: Message) => boolean): Promise<Message> {
  let last: Message | undefined
  for (let i = 0; i < 200; i++) {
    const { messages } = await live.server.person.feed(live.server.channelId)
    last = messages.find((m) => m.id === id) as Message | undefined
    if (last && ready(last)) return last
    await Bun.sleep(25)
  }
  throw new Error(`question ${id} never got there: ${JSON.stringify(last?.ask)}`)
}

const text = (r: unknown) =>
  JSON.parse((r as { content: { text: string }[] }).content[0]?.text ?? '')

describe('progress while waiting', () => {
  test('ask tells the client it is waiting, with growing progress', async () => {
    const seen: Progress[] = []
    const before = await openIds()
    const call = live.client.callTool(
      { name: 'ask', arguments: { question: 'Merge?', confirm: 'Merge', wait_seconds: 20 } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    )
    const question = await newQuestion(before)
    await Bun.sleep(700)
    await live.server.person.answer(question.id, true)
    expect(text(await call)).toEqual({ id: question.id, status: 'answered', answer: true })
    expect(seen.length).toBeGreaterThanOrEqual(3)
    expect(seen[0]?.message).toContain(`asked ${question.id}; waiting for the person`)
    expect(seen.every((p) => p.total === 20)).toBe(true)
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]?.progress ?? 0).toBeGreaterThan(seen[i - 1]?.progress ?? 0)
    }
  })

  test('wait_for_answer does too; a call without a progress token gets none', async () => {
    const asked = text(
      await live.client.callTool({
        name: 'ask',
        arguments: { question: 'Later?', confirm: 'Yes', wait_seconds: 0 },
      }),
    )
    // The SDK client reports a progress notification of a token it did not send as an error.
    const errors: Error[] = []
    live.client.onerror = (error) => errors.push(error)
    const [quiet] = await Promise.all([
      live.client.callTool({
        name: 'wait_for_answer',
        arguments: { id: asked.id, wait_seconds: 1 },
      }),
    ])
    expect(text(quiet).status).toBe('pending')
    expect(errors).toEqual([])
    const seen: Progress[] = []
    const call = live.client.callTool(
      { name: 'wait_for_answer', arguments: { id: asked.id, wait_seconds: 20 } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    )
    await Bun.sleep(500)
    await live.server.person.answer(asked.id, true)
    expect(text(await call).status).toBe('answered')
    expect(seen.length).toBeGreaterThanOrEqual(2)
    expect(seen[0]?.message).toContain(`waiting for the person to answer ${asked.id}`)
  })
})

describe('cancellation', () => {
  test('a cancelled ask withdraws its question, and the server stays usable', async () => {
    const before = await openIds()
    const controller = new AbortController()
    const call = live.client.callTool(
      { name: 'ask', arguments: { question: 'Deploy now?', confirm: 'Deploy', wait_seconds: 30 } },
      undefined,
      { signal: controller.signal },
    )
    const question = await newQuestion(before)
    controller.abort('the person answered in the terminal')
    await expect(call).rejects.toThrow()
    const withdrawn = await questionWhen(question.id, (m) => m.ask?.status !== 'open')
    expect(withdrawn.ask).toMatchObject({ status: 'cancelled', reason: 'cancelled by the agent' })
    const sent = await live.client.callTool({ name: 'notify', arguments: { text: 'still here' } })
    expect(text(sent).id).toMatch(/^msg_/)
  })

  test('a cancelled wait_for_answer only stops waiting: the question stays open', async () => {
    const asked = text(
      await live.client.callTool({
        name: 'ask',
        arguments: { question: 'Keep me?', confirm: 'Yes', wait_seconds: 0 },
      }),
    )
    const controller = new AbortController()
    const call = live.client.callTool(
      { name: 'wait_for_answer', arguments: { id: asked.id, wait_seconds: 30 } },
      undefined,
      { signal: controller.signal },
    )
    await Bun.sleep(300)
    controller.abort()
    await expect(call).rejects.toThrow()
    await Bun.sleep(300)
    expect((await openIds()).has(asked.id)).toBe(true)
    const [answered] = await Promise.all([
      live.client.callTool({ name: 'wait_for_answer', arguments: { id: asked.id } }),
      Bun.sleep(200).then(() => live.server.person.answer(asked.id, true)),
    ])
    expect(text(answered)).toEqual({ id: asked.id, status: 'answered', answer: true })
  })

  test('a cancelled approve withdraws its card', async () => {
    const before = await openIds()
    const controller = new AbortController()
    const call = live.client.callTool(
      { name: 'approve', arguments: { tool_name: 'Bash', input: { command: 'rm -rf build' } } },
      undefined,
      { signal: controller.signal },
    )
    const card = await newQuestion(before)
    expect(card.body.blocks?.[0]?.type).toBe('approval')
    controller.abort()
    await expect(call).rejects.toThrow()
    const withdrawn = await questionWhen(card.id, (m) => m.ask?.status !== 'open')
    expect(withdrawn.ask).toMatchObject({ status: 'cancelled', reason: 'cancelled by the agent' })
  })
})
