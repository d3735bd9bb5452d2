import { afterEach, describe, expect, test } from 'bun:test'
import type { ChannelRow } from '../../src/channels/store.ts'
import type { MessageRow } from '../../src/messages/store.ts'
import { messagePayload } from '../../src/push/payload.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

/**
 * An approval's push (PRODUCT.md "Approvals"): it reads as what will happen (the summary, or a
 * line from the tool and its main field), asks in its title, and offers Allow and Deny; never
 * "allow for this session", which only the app offers. Deny answers from the notification; Allow
 * opens the app at the message (`?act=allow`), because an allow is signed by a passkey there
 * and a service worker cannot sign (PRODUCT.md "Trusted answers"). Any other question asked
 * with proof has no answer buttons at all: a tap opens it in the app.
 */
let f: PushFixture
afterEach(() => f?.close())

const answerRaw = (fx: PushFixture, json: unknown) =>
  fx.s.raw().raw('POST', '/v1/push/answer', { json })

interface Payload {
  title: string | null
  text: string
  url: string
  actions?: { action: string; title: string; answer?: unknown; url?: string }[]
  capability?: string
  danger?: boolean
}

const approval = (fields: Record<string, unknown>) => ({
  type: 'approval',
  id: 'approval',
  ...fields,
})

/** Allow opens the message in the app to sign it there; Deny answers from the notification. */
const allowDeny = (message: { id: string; channel_id: string }) => [
  {
    action: 'allow',
    title: 'Allow…',
    url: `/c/${message.channel_id}?act=allow#${message.id}`,
  },
  { action: 'deny', title: 'Deny', answer: { decision: 'deny' } },
]

describe('approval pushes', () => {
  test('summary as the text, the message title; Allow opens the app to sign, Deny answers', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const { message } = await f.s.agent.send({
      body: {
        title: 'Claude Code wants to run a command',
        blocks: [
          approval({
            tool: 'Bash',
            input: { command: 'npm test', description: 'Run the tests' },
            summary: 'npm test',
            scopes: ['once', 'session'],
          }),
        ],
      },
    } as never)
    const [got] = await f.receiver.waitFor(1)
    const payload = got?.payload as unknown as Payload
    expect(payload.title).toBe('Claude Code wants to run a command')
    expect(payload.text).toBe('npm test')
    // Offered for the session in the app, yet only once from the lock screen.
    expect(payload.actions).toEqual(allowDeny(message))
    expect(payload.url).toBe(`/c/${message.channel_id}#${message.id}`)
    expect(payload.danger).toBeUndefined()
    // Deny still needs the capability the push carries.
    expect(payload.capability).toMatch(/^hark_cap_/)
    // An allow through the capability (a leaked payload, a forged button) is refused: an
    // approval is allowed only in the app, signed; the capability stays good for Deny.
    const forged = await answerRaw(f, {
      capability: payload.capability,
      answer: { decision: 'allow' },
    })
    expect(forged.status).toBe(403)
    expect((await f.s.agent.ask(message.id)).message.ask?.status).toBe('open')
    const ok = await answerRaw(f, { capability: payload.capability, answer: { decision: 'deny' } })
    expect(ok.status).toBe(200)
    expect((await f.s.agent.ask(message.id)).answer).toEqual({ decision: 'deny' })
  })

  test('a destructive approval is marked; Deny from the notification answers {decision: deny}', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const { message } = await f.s.agent.send({
      body: {
        blocks: [approval({ tool: 'Bash', input: { command: 'rm -rf /srv/data' }, danger: true })],
      },
    } as never)
    const [got] = await f.receiver.waitFor(1)
    const payload = got?.payload as unknown as Payload
    expect(payload).toMatchObject({
      title: 'Approve Bash?',
      text: 'rm -rf /srv/data',
      danger: true,
      actions: allowDeny(message),
    })
    const denied = await answerRaw(f, {
      capability: payload.capability,
      answer: { decision: 'deny' },
    })
    expect(denied.status).toBe(200)
    expect((await f.s.agent.ask(message.id)).answer).toEqual({ decision: 'deny' })
  })

  test('without a summary: a line from the tool and its main input field', async () => {
    f = await startPushServer()
    const cases: [Record<string, unknown>, string, string][] = [
      [{ tool: 'Bash', input: { command: 'make\n  deploy' } }, 'Approve Bash?', 'make deploy'],
      [
        { tool: 'shell', input: { command: ['bash', '-lc', 'npm run build'] } },
        'Approve shell?',
        "bash -lc 'npm run build'",
      ],
      [
        { tool: 'Edit', input: { file_path: '/srv/app.ts', old_string: 'a', new_string: 'b' } },
        'Approve Edit?',
        'Edit /srv/app.ts',
      ],
      [
        { tool: 'WebFetch', input: { url: 'https://example.com', prompt: 'read it' } },
        'Approve WebFetch?',
        'WebFetch https://example.com',
      ],
      [
        { tool: 'mcp__github__create_issue', input: { title: 'Bug' } },
        'Approve github: create_issue?',
        'github: create_issue',
      ],
      [{ tool: 'Grep', input: { pattern: 'TODO' } }, 'Approve Grep?', 'Grep: TODO'],
    ]
    for (const [fields, title, text] of cases) {
      const { message } = await f.s.agent.send({ body: { blocks: [approval(fields)] } } as never)
      const payload = messagePayload(
        (await f.s.ctx.store.channels.byId(message.channel_id)) as ChannelRow,
        (await f.s.ctx.store.messages.byId(message.id)) as MessageRow,
      )
      expect({ title: payload.title, text: payload.text }).toEqual({ title, text })
      expect(payload.actions).toEqual(allowDeny(message))
    }
  })

  test('a long command is cut to fit the notification; a closed approval carries no buttons', async () => {
    f = await startPushServer()
    const { message } = await f.s.agent.send({
      body: {
        blocks: [approval({ tool: 'Bash', input: { command: `echo ${'x'.repeat(5000)}` } })],
      },
    } as never)
    const payloadOf = async () =>
      messagePayload(
        (await f.s.ctx.store.channels.byId(message.channel_id)) as ChannelRow,
        (await f.s.ctx.store.messages.byId(message.id)) as MessageRow,
      )
    const open = await payloadOf()
    expect(open.text.length).toBeLessThanOrEqual(300)
    expect(open.text.endsWith('…')).toBe(true)
    await f.s.agent.cancel(message.id, 'answered in the terminal')
    expect((await payloadOf()).actions).toBeUndefined()
  })

  test('a question asked with proof has no answer buttons; the same question without has them', async () => {
    f = await startPushServer()
    const confirm = { type: 'confirm', id: 'go', label: 'Deploy now' }
    const payloadOf = async (proof: boolean) => {
      const { message } = await f.s.agent.send({ body: { blocks: [confirm] }, proof } as never)
      return messagePayload(
        (await f.s.ctx.store.channels.byId(message.channel_id)) as ChannelRow,
        (await f.s.ctx.store.messages.byId(message.id)) as MessageRow,
      )
    }
    const signed = await payloadOf(true)
    expect(signed.actions).toBeUndefined()
    expect(signed.url).toBe(`/c/${f.s.channelId}#${signed.message_id}`)
    expect((await payloadOf(false)).actions).toEqual([
      { action: 'a0', title: 'Deploy now', answer: true },
    ])
  })
})
