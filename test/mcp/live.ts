import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'

/**
 * `hark mcp` as an MCP client runs it: a process on stdio driven by the official SDK's Client,
 * against a live test server on loopback.
 */
const ROOT = join(import.meta.dir, '..', '..')
const DIST = join(ROOT, 'dist', 'hark')

const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    const ms = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs
    if (ms > newest) newest = ms
  }
  return newest
}

/**
 * `dist/hark` when it is at least as new as every source file (`npm test` builds it just before
 * the suite, so CI tests what ships), else `bun src/main.ts`: a stale binary would test older
 * code than the tree's (the rule of test/harnesses/hark-codex.ts).
 */
export const HARK_MCP: { command: string; args: string[] } =
  existsSync(DIST) && statSync(DIST).mtimeMs >= newestMtime(join(ROOT, 'src'))
    ? { command: DIST, args: ['mcp'] }
    : { command: process.execPath, args: [join(ROOT, 'src', 'main.ts'), 'mcp'] }

export interface LiveMcp {
  server: TestServer
  client: Client
  home: string
  close(): Promise<void>
}

/** A test server, and `hark mcp` connected to its first channel with `env` added. */
export async function startMcp(env: Record<string, string> = {}): Promise<LiveMcp> {
  const server = await startTestServer({ listen: true })
  const home = tempDir('hark-mcp-')
  const client = new Client({ name: 'hark-test', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({
      ...HARK_MCP,
      env: {
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        HARK_URL: server.url,
        HARK_TOKEN: server.agentToken,
        ...env,
      },
      stderr: 'pipe',
    }),
  )
  return {
    server,
    client,
    home,
    async close() {
      await client.close()
      await server.close()
      rmSync(home, { recursive: true, force: true })
    },
  }
}
