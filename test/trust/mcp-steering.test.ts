import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { encryptSecret } from '../../src/shared/secret-crypto.ts'
import { signAnswer, signSecret } from '../asks/signing.ts'
import { type Cli, makeCli, removeHome } from '../cli/live.ts'
import { type Relay, startProxy } from '../harnesses/signed.ts'
import { HARK_MCP } from '../mcp/live.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'

/**
 * The MCP server's side of answers that steer an agent (issue 31, item 6): `approve` turning
 * AskUserQuestion into a question, and `request_secret`. With the person's passkey pinned and
 * no HARK_ALLOW_UNSIGNED, a server (a proxy between `hark mcp` and the real server) that
 * rewrites the choice, or swaps in a ciphertext of its own, gets a deny or an error, never its
 * value used.
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string }
let cli: Cli
let agentToken: string
let proxy: Relay
let forge: (body: Record<string, unknown>) => boolean
let mcp: Client

beforeEach(async () => {
  s = await startFreshServer({ listen: true })
  s.clock.now = () => Date.now()
  owner = await s.setUpOwner()
  const made = await addChannel(s.ctx, { email: 'owner@example.com', label: 'MCP' })
  agentToken = made.token
  cli = makeCli()
  const env = { HARK_URL: s.url, HARK_TOKEN: made.token }
  expect((await cli.run(['keys', 'refresh'], { env })).code).toBe(0)
  forge = () => false
  proxy = startProxy(s.url, (body) => forge(body))
  mcp = new Client({ name: 'hark-test', version: '1.0.0' })
  await mcp.connect(
    new StdioClientTransport({
      ...HARK_MCP,
      env: {
        HOME: cli.home,
        XDG_CONFIG_HOME: join(cli.home, 'config'),
        HARK_URL: proxy.url,
        HARK_TOKEN: agentToken,
        HARK_HOOK_WAIT: '20',
      },
      stderr: 'pipe',
    }),
  )
})
afterEach(async () => {
  await mcp.close()
  proxy.stop()
  await s.close()
  removeHome(cli)
})

type Result = { isError?: boolean; content: { type: string; text: string }[] }

async function openQuestion(before: Set<string>): Promise<Message> {
  for (let i = 0; i < 1500; i++) {
    const r = await s.request('GET', '/v1/app/asks', { cookie: owner.cookie })
    const found = (r.body.asks as Message[]).find((m) => !before.has(m.id))
    if (found) return found
    await Bun.sleep(10)
  }
  throw new Error('no question appeared')
}

const askUserQuestion = {
  tool_name: 'AskUserQuestion',
  input: {
    questions: [
      { question: 'Which registry?', options: [{ label: 'npmjs' }, { label: 'internal' }] },
    ],
  },
}

/** `approve` on AskUserQuestion while the person picks `choice` in the app (signed when the
 * question takes proof, as the app does). */
async function approveAnswered(choice: string) {
  const r = await s.request('GET', '/v1/app/asks', { cookie: owner.cookie })
  const before = new Set((r.body.asks as Message[]).map((m) => m.id))
  const call = mcp.callTool({ name: 'approve', arguments: askUserQuestion }) as Promise<Result>
  const q = await openQuestion(before)
  const proof =
    typeof q.ask?.request_hash === 'string'
      ? await signAnswer(owner.authenticator, q, choice, { rpId: s.rpId })
      : undefined
  const answered = await s.request('POST', `/v1/app/messages/${q.id}/answer`, {
    cookie: owner.cookie,
    json: { answer: choice, ...(proof ? { proof } : {}) },
  })
  expect(answered.status).toBe(200)
  return { question: q, data: JSON.parse((await call).content[0]?.text ?? '') }
}

describe('MCP approve: AskUserQuestion', () => {
  test("the person's signed choice is handed on", async () => {
    const { question, data } = await approveAnswered('npmjs')
    expect(question.ask?.request_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(data).toEqual({
      behavior: 'allow',
      updatedInput: { ...askUserQuestion.input, answers: { 'Which registry?': 'npmjs' } },
    })
  })

  test('a choice the server rewrote is a deny that says why', async () => {
    forge = (body) => {
      const ask = (body.message as Message | undefined)?.ask
      if (ask?.status !== 'answered') return false
      body.answer = 'internal'
      ask.answer = 'internal'
      return true
    }
    const { data } = await approveAnswered('npmjs')
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(data.behavior).toBe('deny')
    expect(data.message).toContain('is not trusted (the signature is not over this answer')
  })
})

describe('MCP request_secret', () => {
  test("a ciphertext the server sealed itself to the agent's key is an error, never written", async () => {
    let forged: string | undefined
    forge = (body) => {
      if (typeof body.ciphertext !== 'string' || !forged) return false
      body.ciphertext = forged
      return true
    }
    const first = (await mcp.callTool({
      name: 'request_secret',
      arguments: { name: 'NPM_TOKEN', wait_seconds: 0.5 },
    })) as Result
    const id = JSON.parse(first.content[0]?.text ?? '').id as string
    const read = await s.request('GET', `/v1/app/secrets/${id}`, { cookie: owner.cookie })
    const record = read.body.secret_request
    forged = await encryptSecret(record.public_key, id, 'npm_attacker')
    const ciphertext = await encryptSecret(record.public_key, id, 'npm_person')
    const proof = await signSecret(owner.authenticator, record, ciphertext, s.rpId)
    const fulfilled = await s.request('POST', `/v1/app/secrets/${id}/fulfil`, {
      cookie: owner.cookie,
      json: { ciphertext, proof },
    })
    expect(fulfilled.status).toBe(200)
    const path = join(cli.home, 'npm-token')
    const second = (await mcp.callTool({
      name: 'request_secret',
      arguments: { id, path },
    })) as Result
    expect(proxy.rewrites).toBe(1)
    expect(second.isError).toBe(true)
    expect(second.content[0]?.text).toContain('is not trusted (the signature is not over')
    expect(await Bun.file(path).exists()).toBe(false)
  })
})
