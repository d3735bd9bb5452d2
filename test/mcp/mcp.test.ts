import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Message } from '../../src/messages/schema.ts'
import { encryptSecret, fingerprint } from '../../src/shared/secret-crypto.ts'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'
import { HARK_MCP } from './live.ts'

/**
 * `hark mcp` as an MCP client sees it: a process on stdio, driven by the official SDK's Client,
 * against a real server on loopback. The person answers through the person API.
 */
let server: TestServer
let client: Client
let home: string

beforeAll(async () => {
  server = await startTestServer({ listen: true })
  home = tempDir('hark-mcp-')
  client = new Client({ name: 'hark-test', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({
      // dist/hark when it is fresh, else bun src/main.ts (live.ts).
      ...HARK_MCP,
      env: {
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        HARK_URL: server.url,
        HARK_TOKEN: server.agentToken,
        // Plumbing: request_secret's answer comes unsigned here (test/trust/secrets.test.ts).
        HARK_ALLOW_UNSIGNED: '1',
      },
      stderr: 'pipe',
    }),
  )
})
afterAll(async () => {
  await client.close()
  await server.close()
  rmSync(home, { recursive: true, force: true })
})

/** Calls a tool and parses its one JSON text result. */
async function call(name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean
    content: { type: string; text: string }[]
  }
  const text = result.content[0]?.text ?? ''
  let data: Record<string, unknown> = {}
  try {
    data = JSON.parse(text)
  } catch {}
  return { isError: result.isError === true, text, data }
}

/** Answers the newest open question once it appears, as the person. */
async function answerWhenAsked(answer: unknown): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const { channels } = await server.person.channels()
    const { messages } = await server.person.feed(server.channelId)
    const open = messages.filter((m) => (m as Message).ask?.status === 'open') as Message[]
    const newest = open.at(-1)
    if (newest && channels.length > 0) {
      await server.person.answer(newest.id, answer)
      return newest.id
    }
    await Bun.sleep(50)
  }
  throw new Error('no question appeared')
}

describe('hark mcp', () => {
  test('lists its tools, each with an input schema', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([
      'acknowledge',
      'approve',
      'ask',
      'cancel',
      'notify',
      'pin',
      'progress',
      'read_messages',
      'request_secret',
      'unpin',
      'upload',
      'wait_for_answer',
    ])
    const ask = tools.find((t) => t.name === 'ask')
    expect(ask?.inputSchema.required).toEqual(['question'])
    expect(ask?.description).toContain('pending')
  })

  test('notify sends a message', async () => {
    const r = await call('notify', { title: 'Done', text: 'all tests pass', silent: true })
    expect(r.isError).toBe(false)
    expect(r.data.id).toMatch(/^msg_/)
    const { messages } = await server.person.feed(server.channelId)
    const sent = messages.find((m) => m.id === r.data.id) as Message
    expect(sent.body).toEqual({ title: 'Done', text: 'all tests pass' })
    expect(sent.silent).toBe(true)
  })

  test('ask returns the answer when it comes within the wait', async () => {
    const [r, answeredId] = await Promise.all([
      call('ask', { question: 'Merge?', choices: ['merge', 'wait'], wait_seconds: 20 }),
      answerWhenAsked('merge'),
    ])
    expect(r.isError).toBe(false)
    expect(r.data).toEqual({ id: answeredId, status: 'answered', answer: 'merge' })
  })

  test('ask and wait_for_answer return "pending" as data when no answer comes', async () => {
    const asked = await call('ask', { question: 'Still there?', confirm: 'Yes', wait_seconds: 1 })
    expect(asked.isError).toBe(false)
    const id = asked.data.id as string
    expect(id).toMatch(/^msg_/)
    expect(asked.data.status).toBe('pending')
    const again = await call('wait_for_answer', { id, wait_seconds: 0.5 })
    expect(again.isError).toBe(false)
    expect(again.data).toMatchObject({ id, status: 'pending' })
    const [answered] = await Promise.all([
      call('wait_for_answer', { id, wait_seconds: 20 }),
      Bun.sleep(300).then(() => server.person.answer(id, true)),
    ])
    expect(answered.data).toEqual({ id, status: 'answered', answer: true })
  })

  test('cancel withdraws a question; errors come back as tool errors', async () => {
    const asked = await call('ask', { question: 'Cancel me', text_input: 'Why', wait_seconds: 0 })
    const id = asked.data.id as string
    const cancelled = await call('cancel', { id })
    expect(cancelled.data).toEqual({ id, status: 'cancelled' })
    const waited = await call('wait_for_answer', { id, wait_seconds: 1 })
    expect(waited.data).toEqual({ id, status: 'cancelled', answer: null })
    const twice = await call('cancel', { id })
    expect(twice.isError).toBe(true)
    expect(twice.text).toContain('already cancelled')
    const noInput = await call('ask', { question: 'No inputs?' })
    expect(noInput.isError).toBe(true)
    expect(noInput.text).toContain('needs an input')
  })

  test('read_messages and acknowledge', async () => {
    const { message } = await server.person.send(server.channelId, { text: 'please deploy' })
    const read = await call('read_messages')
    expect(read.data.messages).toEqual([
      { id: message.id, created_at: message.created_at, state: 'seen', text: 'please deploy' },
    ])
    expect((await call('read_messages')).data.messages).toEqual([])
    const [waited] = await Promise.all([
      call('read_messages', { wait_seconds: 20 }),
      Bun.sleep(300).then(() => server.person.send(server.channelId, { text: 'and hurry' })),
    ])
    expect((waited.data.messages as { text: string }[]).map((m) => m.text)).toEqual(['and hurry'])
    const ack = await call('acknowledge', { id: message.id, state: 'done' })
    expect(ack.data).toEqual({ id: message.id, state: 'done' })
    const bad = await call('acknowledge', { id: message.id, state: 'finished' })
    expect(bad.isError).toBe(true)
  })

  test('pin, progress, unpin and upload', async () => {
    const pinned = await call('pin', { key: 'status', text: 'migrating' })
    expect(pinned.data).toMatchObject({ key: 'status', id: expect.stringMatching(/^msg_/) })
    const bar = await call('progress', { key: 'copy', value: 3, max: 10, label: 'files' })
    expect(bar.data.key).toBe('copy')
    const file = join(home, 'notes.txt')
    writeFileSync(file, 'hello')
    const uploaded = await call('upload', { path: file })
    expect(uploaded.data).toMatchObject({ name: 'notes.txt', size: 5 })
    expect((await call('unpin', { key: 'status' })).data).toEqual({ ok: true })
    const missing = await call('upload', { path: join(home, 'nope') })
    expect(missing.isError).toBe(true)
  })
  test('request_secret writes the secret to a 0600 file and returns only its path', async () => {
    const secret = `canary-${crypto.randomUUID()}`
    const first = await call('request_secret', { name: 'NPM_TOKEN', wait_seconds: 0.5 })
    expect(first.isError).toBe(false)
    const id = first.data.id as string
    const print = first.data.fingerprint as string
    expect(first.data.status).toBe('pending')
    expect(print).toMatch(/^[0-9a-f ]{19}$/)
    const { secret_request } = await server.person.secret(id)
    expect(await fingerprint(secret_request.public_key)).toBe(print)
    await server.person.fulfilSecret(id, await encryptSecret(secret_request.public_key, id, secret))
    const path = join(home, 'npm-token')
    const second = await call('request_secret', { id, path })
    expect(second.data).toEqual({ id, status: 'received', name: 'NPM_TOKEN', path })
    expect(second.text).not.toContain(secret)
    expect(readFileSync(path, 'utf8')).toBe(secret)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    // Its key is gone with the request: it cannot be waited for again.
    expect((await call('request_secret', { id })).isError).toBe(true)
  })
})
