import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { HARK, requireBinary, run } from '../binary/process.ts'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'
import { connectedEnv } from './live.ts'

/** The compiled `dist/hark` carries the agent CLI and the MCP server (SDK bundled). */
let server: TestServer
let home: string
let env: Record<string, string>

beforeAll(async () => {
  requireBinary()
  server = await startTestServer({ listen: true })
  home = tempDir('hark-bin-')
  env = { ...connectedEnv(server), HOME: home, XDG_CONFIG_HOME: home }
})
afterAll(async () => {
  await server.close()
  rmSync(home, { recursive: true, force: true })
})

test('dist/hark send and ask --timeout', async () => {
  const sent = await run(['send', 'from the binary', '--json'], env)
  expect(sent.code).toBe(0)
  expect(JSON.parse(sent.stdout).message.body.text).toBe('from the binary')
  const asked = await run(['ask', 'x', '--confirm', 'y', '--timeout', '0', '--json'], env)
  expect(asked.code).toBe(124)
  expect(JSON.parse(asked.stdout).status).toBe('timeout')
})

test('dist/hark mcp lists its tools and sends', async () => {
  const client = new Client({ name: 'hark-test', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: HARK, args: ['mcp'], env }))
  try {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toContain('wait_for_answer')
    const result = (await client.callTool({ name: 'notify', arguments: { text: 'hi' } })) as {
      content: { text: string }[]
    }
    expect(JSON.parse(result.content[0]?.text as string).id).toMatch(/^msg_/)
  } finally {
    await client.close()
  }
})

test('dist/hark run: runs the command, reports its tail, exits with its code', async () => {
  const ran = await run(['run', '--title', 'Build', '--', 'sh', '-c', 'echo built; exit 3'], env)
  expect(ran.code).toBe(3)
  expect(ran.stdout).toContain('built')
  const { messages } = await server.person.feed(server.channelId, { since: 0 })
  // The result message (the status pin it kept meanwhile is gone: a tombstone in the feed).
  const results = messages.filter((m) => 'body' in m && m.body.title === 'Build')
  expect(results).toHaveLength(1)
  expect(JSON.stringify(results[0])).toContain('built')
  const { pins } = await server.agent.pins()
  expect(pins).toHaveLength(0)
})
