import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  type ClientCapabilities,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js'
import type { Message } from '../../src/messages/schema.ts'
import { fingerprint } from '../../src/shared/secret-crypto.ts'
import { type ClaudeSandbox, makeClaudeSandbox } from '../harnesses/claude-code.ts'
import {
  fulfilSecret,
  pinKeys,
  type SignedHark,
  secretRecord,
  startProxy,
  startSignedHark,
} from '../harnesses/signed.ts'
import { HARK_MCP } from './live.ts'

/**
 * `request_secret` through URL-mode elicitation (issue 34, item 4), driven by the official SDK's
 * Client: one declaring `elicitation {form, url}` as Claude Code 2.1.330 does, one declaring no
 * URL mode. The Hark server is real and the person's passkey a software authenticator pinned
 * with `hark keys refresh`, so the secret is opened only with their signature, as without
 * elicitation.
 */

let h: SignedHark
let box: ClaudeSandbox
let client: Client
/** Each `elicitation/create` the client received, in order. */
let elicited: Record<string, unknown>[]
/** The ids of `notifications/elicitation/complete` received. */
let completed: string[]
/** What the client answers an elicitation (the person at the terminal). */
let answer: ElicitResult['action']

async function connect(capabilities: ClientCapabilities, env: Record<string, string> = {}) {
  client = new Client({ name: 'claude-code', version: '2.1.330' }, { capabilities })
  elicited = []
  completed = []
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params as Record<string, unknown>)
      return { action: answer }
    })
  }
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === 'notifications/elicitation/complete') {
      completed.push(String((n.params as { elicitationId: unknown }).elicitationId))
    }
  }
  await client.connect(
    new StdioClientTransport({
      ...HARK_MCP,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.home, ...h.env, ...env },
      stderr: 'pipe',
    }),
  )
}

beforeEach(async () => {
  h = await startSignedHark()
  box = makeClaudeSandbox()
  await pinKeys(h, box)
  answer = 'accept'
})
afterEach(async () => {
  await client?.close()
  box.cleanup()
  await h.close()
})

const URL_CLIENT: ClientCapabilities = { elicitation: { form: {}, url: {} } }

/** Waits (bounded) until `cond` holds. */
async function until(cond: () => boolean, what: string) {
  const deadline = Date.now() + 20_000
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`not reached: ${what}`)
    await Bun.sleep(20)
  }
}

type Result = { isError?: boolean; text: string; json: Record<string, unknown> }

async function call(args: Record<string, unknown>): Promise<Result> {
  const r = await client.callTool({ name: 'request_secret', arguments: args }, undefined, {
    timeout: 60_000,
  })
  const text = (r.content as { text: string }[])[0]?.text ?? ''
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(text)
  } catch {}
  return { isError: r.isError as boolean | undefined, text, json }
}

/** The request as the person's app reads it. */
const record = (id: string) => secretRecord(h, id)

/** The person enters `value` on the page: encrypted to the request's key, signed unless not. */
const fulfil = (id: string, value: string, signed = true) => fulfilSecret(h, id, value, signed)

describe('MCP request_secret through URL-mode elicitation', () => {
  test('a client with elicitation.url is offered the request’s page; the signed secret entered there is received, and the elicitation completed', async () => {
    await connect(URL_CLIENT)
    const secret = `canary-${crypto.randomUUID()}`
    const path = join(box.root, 'npm-token')
    const calling = call({ name: 'NPM_TOKEN', description: 'to publish', path, wait_seconds: 30 })
    await until(() => elicited.length === 1, 'an elicitation')
    const e = elicited[0] as { mode: string; url: string; message: string; elicitationId: string }
    const r = await record(e.elicitationId)
    // The page is the request's message in the agent's thread, at the server's public base URL.
    const info = (await h.s.request('GET', '/v1/info')).body as { base_url: string }
    expect(e.mode).toBe('url')
    expect(e.url).toBe(`${info.base_url}/c/${r.channel_id}#${r.message_id}`)
    const feed = await h.s.request('GET', `/v1/messages?since=0&peek=1`, {
      token: h.env.HARK_TOKEN,
    })
    const shown = (feed.body.messages as Message[]).find((m) => m.id === r.message_id)
    expect(shown?.body.blocks?.[0]).toMatchObject({ type: 'secret_request', request_id: r.id })
    // The person can check the key their secret is sealed to, from the dialog alone.
    expect(e.message).toContain(await fingerprint(r.public_key))
    expect(e.message).toContain('NPM_TOKEN')
    expect(e.message).not.toContain(secret)

    await fulfil(r.id, secret)
    const done = await calling
    expect(done.json).toEqual({ id: r.id, status: 'received', name: 'NPM_TOKEN', path })
    expect(done.text).not.toContain(secret)
    expect(readFileSync(path, 'utf8')).toBe(secret)
    await until(() => completed.length === 1, 'notifications/elicitation/complete')
    expect(completed).toEqual([r.id])
    expect(elicited).toHaveLength(1)
  })

  test('an unsigned ciphertext entered on the page is not opened, as without elicitation', async () => {
    await connect(URL_CLIENT)
    const path = join(box.root, 'forged')
    const calling = call({ name: 'NPM_TOKEN', path, wait_seconds: 30 })
    await until(() => elicited.length === 1, 'an elicitation')
    const id = String(elicited[0]?.elicitationId)
    await fulfil(id, 'npm_attacker', false)
    const done = await calling
    expect(done.isError).toBe(true)
    expect(done.text).toContain('not trusted')
    expect(existsSync(path)).toBe(false)
  })

  test('declined at the terminal: the request is withdrawn and the call ends cancelled, saying so', async () => {
    answer = 'decline'
    await connect(URL_CLIENT)
    const done = await call({ name: 'NPM_TOKEN', wait_seconds: 30 })
    expect(elicited).toHaveLength(1)
    const id = String(elicited[0]?.elicitationId)
    expect(done.json).toEqual({
      id,
      status: 'cancelled',
      reason: 'the person declined at the terminal',
    })
    expect((await record(id)).status).toBe('cancelled')
    expect(completed).toEqual([])
  })

  test('dismissed (cancel): the request stays open in the thread and can still be answered there', async () => {
    answer = 'cancel'
    await connect(URL_CLIENT)
    const first = await call({ name: 'NPM_TOKEN', wait_seconds: 1 })
    expect(elicited).toHaveLength(1)
    const id = String(elicited[0]?.elicitationId)
    expect(first.json).toMatchObject({ id, status: 'pending' })
    expect((await record(id)).status).toBe('pending')
    const secret = `canary-${crypto.randomUUID()}`
    await fulfil(id, secret)
    const path = join(box.root, 'later')
    expect((await call({ id, path })).json).toMatchObject({ status: 'received', path })
    expect(readFileSync(path, 'utf8')).toBe(secret)
    // The resumed call offers no second link: the request was offered once.
    expect(elicited).toHaveLength(1)
  })

  test('a client without elicitation.url gets request_secret as before: no elicitation, the fingerprint to tell', async () => {
    await connect({ elicitation: { form: {} } })
    const first = await call({ name: 'NPM_TOKEN', wait_seconds: 0.5 })
    expect(first.json).toMatchObject({ status: 'pending', fingerprint: expect.any(String) })
    expect(elicited).toEqual([])
  })

  test('a base URL of another origin than HARK_URL (a rewriting proxy) gets no link: request_secret as before', async () => {
    const proxy = startProxy(h.env.HARK_URL, (body) => {
      if (typeof body !== 'object' || body === null || !('base_url' in body)) return false
      ;(body as Record<string, unknown>).base_url = 'https://hark.evil.example'
      return true
    })
    try {
      await connect(URL_CLIENT, { HARK_URL: proxy.url })
      const first = await call({ name: 'NPM_TOKEN', wait_seconds: 0.5 })
      expect(first.json).toMatchObject({ status: 'pending', fingerprint: expect.any(String) })
      expect(proxy.rewrites).toBe(1)
      expect(elicited).toEqual([])
    } finally {
      proxy.stop()
    }
  })

  test('the server declares no tasks capability: long waits stay ask / wait_for_answer', async () => {
    await connect(URL_CLIENT)
    const declared = client.getServerCapabilities() ?? {}
    expect(Object.keys(declared).sort()).toEqual(['resources', 'tools'])
    expect(declared).not.toHaveProperty('tasks')
  })
})
