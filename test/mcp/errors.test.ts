import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'

/**
 * A failing tool call, as a model gets it: `isError: true` and one clear line, never a stack
 * trace nor other internals (issue 16, defect 5). `hark mcp` runs as a process on stdio,
 * driven by the official SDK's client.
 */
let server: TestServer
/** Answers every request 200 with a web page: a HARK_URL that is not a Hark server. */
let notHark: ReturnType<typeof Bun.serve>
let home: string
let hark: Client
let wrongUrl: Client

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'hark-test', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(import.meta.dir, '..', '..', 'src', 'main.ts'), 'mcp'],
      env: {
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        HARK_URL: url,
        HARK_TOKEN: token,
      },
      stderr: 'pipe',
    }),
  )
  return client
}

beforeAll(async () => {
  server = await startTestServer({ listen: true })
  notHark = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response('<!doctype html><title>Hello</title>', { status: 200 }),
  })
  home = tempDir('hark-mcp-errors-')
  hark = await connect(server.url, server.agentToken)
  wrongUrl = await connect(notHark.url.origin, server.agentToken)
})
afterAll(async () => {
  await hark.close()
  await wrongUrl.close()
  notHark.stop(true)
  await server.close()
  rmSync(home, { recursive: true, force: true })
})

/** A tool call's error flag and its one text. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean
    content: { type: string; text: string }[]
  }
  return { isError: result.isError === true, text: result.content[0]?.text ?? '' }
}

/** One line, no stack frame (`at fn (file.ts:1:2)`), no source path. */
function expectOneClearLine(text: string) {
  expect(text).not.toContain('\n')
  expect(text).not.toMatch(/\bat .*:\d+:\d+/)
  expect(text).not.toMatch(/\/src\/|\.ts\b/)
  expect(text.length).toBeLessThan(300)
}

describe('tool errors', () => {
  test('a tool refusing its arguments: one line saying why', async () => {
    const folder = join(home, 'folder')
    mkdirSync(folder)
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'request_secret',
        { id: 'sec_unknown' },
        'no pending secret request sec_unknown in this MCP server; ask again',
      ],
      ['request_secret', {}, 'give the name of the secret (or the id of a pending request)'],
      ['upload', { path: folder }, `cannot read ${folder}: it is a directory`],
      ['cancel', { id: 'msg_unknown' }, 'message not found'],
    ]
    for (const [name, args, text] of cases) {
      const result = await call(hark, name, args)
      expect({ name, ...result }).toEqual({ name, isError: true, text })
    }
  })

  test('an unexpected failure: one line, not blamed on the network, no internals', async () => {
    const result = await call(wrongUrl, 'notify', { text: 'hello' })
    expect(result.isError).toBe(true)
    expectOneClearLine(result.text)
    expect(result.text).toStartWith('unexpected error: ')
    expect(result.text).not.toContain('cannot reach the server')
  })
})
