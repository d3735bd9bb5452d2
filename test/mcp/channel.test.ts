import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pendingApprovals } from '../../src/agent/harnesses/pending.ts'
import { channelEvent } from '../../src/cli/channel/channel.ts'
import type { Message } from '../../src/messages/schema.ts'
import {
  CHANNEL_SESSION,
  type ChannelClient,
  connectChannel,
  EVENT,
  PERMISSION,
} from '../harnesses/channel-client.ts'
import { type ClaudeSandbox, makeClaudeSandbox } from '../harnesses/claude-code.ts'
import { HARK, runHark } from '../harnesses/hark-claude.ts'
import {
  answer,
  denyToAllow,
  NOT_ACTED_ON,
  openAskIds,
  pinKeys,
  type Relay,
  type SignedHark,
  startProxy,
  startSignedHark,
  warnings,
} from '../harnesses/signed.ts'

/**
 * `hark mcp --channel` driven by a client speaking Claude Code's channel protocol exactly
 * (test/harnesses/channel-client.ts). The Hark server is real, the person's passkey a software
 * authenticator pinned with `hark keys refresh`.
 */

const SESSION = CHANNEL_SESSION
let h: SignedHark
let box: ClaudeSandbox
let c: ChannelClient
const proxies: Relay[] = []

async function connect(url: string, extraEnv: Record<string, string> = {}) {
  c = await connectChannel(h, box, url, extraEnv)
}

beforeEach(async () => {
  h = await startSignedHark()
  box = makeClaudeSandbox()
  await pinKeys(h, box)
})
afterEach(async () => {
  await c?.client.close()
  for (const p of proxies.splice(0)) p.stop()
  box.cleanup()
  await h.close()
})

describe('hark mcp --channel: the Claude Code channel protocol', () => {
  test('declares claude/channel and claude/channel/permission', async () => {
    await connect(h.env.HARK_URL)
    expect(c.client.getServerCapabilities()?.experimental).toEqual({
      'claude/channel': {},
      'claude/channel/permission': {},
    })
    expect(c.client.getInstructions()).toContain('<channel source="hark">')
  })

  test('a permission request is the approval card; a signed allow is relayed', async () => {
    await connect(h.env.HARK_URL)
    const card = await c.prompt('abcde')
    const block = card.body.blocks?.[0]
    expect(card.body.title).toBe('Claude Code wants to run a command')
    expect(block).toMatchObject({ type: 'approval', tool: 'Bash', session: SESSION })
    expect(block?.summary).toBe('touch made-by-hark')
    expect(card.ask?.request_hash).toMatch(/^[0-9a-f]{64}$/)
    // Tracked for the session, so the hooks' PostToolUse withdraws it if the terminal answers.
    const tracked = () => pendingApprovals({ HOME: box.home }, SESSION).list('channel:Bash')
    for (let i = 0; i < 400 && tracked().length === 0; i++) await Bun.sleep(25)
    expect(tracked()).toEqual([card.id])
    await answer(h, card, { decision: 'allow' }, 'signed')
    expect(await c.notified(PERMISSION)).toEqual({ request_id: 'abcde', behavior: 'allow' })
    expect(await warnings(h)).toEqual([])
  }, 60_000)

  test('a prompt answered in the terminal is withdrawn from the phone by the PostToolUse hook', async () => {
    await connect(h.env.HARK_URL)
    const card = await c.prompt('vwxyz')
    const hook = Bun.spawn([...HARK.argv, 'hook', 'claude'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.home, ...h.env },
      stdin: new TextEncoder().encode(
        JSON.stringify({
          hook_event_name: 'PostToolUse',
          session_id: SESSION,
          tool_name: 'Bash',
          tool_input: { command: 'touch made-by-hark', description: 'Make a file' },
          tool_response: {},
        }),
      ),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    expect(await hook.exited).toBe(0)
    const record = (await h.s.request('GET', `/v1/asks/${card.id}`, { token: h.env.HARK_TOKEN }))
      .body.message as Message
    expect(record.ask?.status).toBe('cancelled')
    expect(pendingApprovals({ HOME: box.home }, SESSION).list()).toEqual([])
    expect(c.decisions()).toEqual([])
  }, 60_000)

  test('hark install claude --channel: the hooks and the channel server, one card per prompt', async () => {
    const install = await runHark(box, ['install', 'claude', '--channel'], h.env)
    expect([install.code, install.stderr]).toEqual([0, ''])
    const state = JSON.parse(readFileSync(join(box.home, '.claude.json'), 'utf8'))
    expect(state.mcpServers.hark.args.slice(-2)).toEqual(['mcp', '--channel'])
    expect(state.mcpServers.hark.env).toEqual({ HARK_CHANNEL_HOOKS: '1' })
    await connect(h.env.HARK_URL, state.mcpServers.hark.env)
    // The PermissionRequest hook's card for the same prompt, open for the session.
    const hookCard = await h.s.request('POST', '/v1/messages', {
      token: h.env.HARK_TOKEN,
      json: {
        body: {
          title: 'the hook asks',
          blocks: [{ type: 'approval', id: 'approval', tool: 'Bash', input: {}, summary: 'x' }],
        },
      },
    })
    pendingApprovals({ HOME: box.home }, SESSION).add(hookCard.body.message.id, 'hook-key')
    const before = await openAskIds(h)
    await c.permissionRequest('abcdf')
    const deadline = Date.now() + 20_000
    while (!c.stderr().includes('not asked twice') && Date.now() < deadline) await Bun.sleep(20)
    expect(c.stderr()).toContain(
      'abcdf: the PermissionRequest hook asked the person; not asked twice',
    )
    expect([...(await openAskIds(h))].filter((id) => !before.has(id))).toEqual([])
  }, 60_000)

  test('a deny is relayed, and its signed message reaches the session', async () => {
    await connect(h.env.HARK_URL)
    const card = await c.prompt('fghij')
    await answer(h, card, { decision: 'deny', message: 'not in this repo' }, 'signed')
    expect(await c.notified(PERMISSION)).toEqual({ request_id: 'fghij', behavior: 'deny' })
    const event = await c.notified(
      EVENT,
      (p) => (p.meta as { kind?: string })?.kind === 'permission_denied',
    )
    expect(event.content).toBe('The person denied "touch made-by-hark" from Hark: not in this repo')
  }, 60_000)

  test('an unsigned allow is not relayed, and the person is told', async () => {
    await connect(h.env.HARK_URL)
    const card = await c.prompt('kmnop')
    await answer(h, card, { decision: 'allow' }, 'unsigned')
    const [warning] = await eventuallyWarned()
    expect(warning?.body.title).toBe(NOT_ACTED_ON)
    expect(c.decisions()).toEqual([])
  }, 60_000)

  test('a compromised server turning a signed deny into an allow gets nothing relayed as allow', async () => {
    const proxy = startProxy(h.env.HARK_URL, denyToAllow)
    proxies.push(proxy)
    await connect(proxy.url)
    const card = await c.prompt('qrstu')
    await answer(h, card, { decision: 'deny', message: 'no' }, 'signed')
    const [warning] = await eventuallyWarned()
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(warning?.body.text).toContain('the signature is not over this answer to this question')
    expect(c.decisions()).toEqual([])
  }, 60_000)

  test("the person's message reaches the session with who and when; the agent acknowledges it", async () => {
    await connect(h.env.HARK_URL)
    const channelId = (await h.s.request('GET', '/v1/app/channels', { cookie: h.owner.cookie }))
      .body.channels[0].id
    const sent = await h.s.request('POST', `/v1/app/channels/${channelId}/messages`, {
      cookie: h.owner.cookie,
      json: { body: { text: 'also update the changelog' } },
    })
    expect(sent.status).toBe(200)
    const id = sent.body.message.id
    const event = await c.notified(
      EVENT,
      (p) => (p.meta as { message_id?: string })?.message_id === id,
    )
    expect(event.content).toBe('also update the changelog')
    expect(event.meta).toMatchObject({ from: 'person', message_id: id })
    expect(new Date((event.meta as { sent_at: string }).sent_at).getTime()).toBe(
      sent.body.message.created_at,
    )
    // Not marked seen by the channel (it cannot know Claude Code took it): the agent acks, and
    // the stored inbox place did not move, so read_messages still shows it.
    const read = await c.client.callTool({ name: 'read_messages', arguments: {} })
    expect(JSON.stringify(read.content)).toContain('also update the changelog')
    await c.client.callTool({ name: 'acknowledge', arguments: { id, state: 'working' } })
    const r = await h.s.request('GET', '/v1/messages?since=0&peek=1', { token: h.env.HARK_TOKEN })
    expect(r.body.messages.find((m: Message) => m.id === id)?.state).toBe('working')
  }, 60_000)
})

describe('channelEvent', () => {
  test('names attached files by id, with how to fetch them', () => {
    const m = {
      id: 'msg_1',
      channel_id: 'ch_1',
      sender: 'human',
      created_at: Date.UTC(2026, 10, 28, 12),
      updated_at: 0,
      body: {
        text: 'see the log',
        blocks: [{ type: 'file', file_id: 'fil_abc', name: 'build.log' }],
      },
    } as Message
    expect(channelEvent(m)).toEqual({
      content: 'see the log\nAttached: "build.log" (fil_abc): hark download fil_abc',
      meta: {
        from: 'person',
        message_id: 'msg_1',
        sent_at: '2026-11-28T12:00:00.000Z',
        files: 'fil_abc',
      },
    })
  })
})

async function eventuallyWarned() {
  const deadline = Date.now() + 20_000
  for (;;) {
    const found = await warnings(h)
    if (found.length > 0 || Date.now() > deadline) return found
    await Bun.sleep(25)
  }
}
