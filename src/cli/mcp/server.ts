import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { Env } from '../../agent/profiles.ts'
import type { Session } from '../../agent/session.ts'
import { VERSION } from '../../core/version.ts'
import { attachChannel, CHANNEL_CAPABILITIES, CHANNEL_INSTRUCTIONS } from '../channel/channel.ts'
import { progressEveryMs } from './call.ts'
import { registerResources } from './resources.ts'
import { registerTools } from './tool.ts'
import { TOOLS } from './tools.ts'

const INSTRUCTIONS = `Hark is a message channel to the person you work for, on their phone.
Use notify to tell them something, ask to get a decision (then wait_for_answer while the
status is "pending"), read_messages to see what they wrote to you (acknowledge it as working
or done), pin and progress to keep a status visible, upload to share a file. The resources
hark://pins and hark://asks show the pinned statuses and the questions still open.`

/**
 * `hark mcp`: the agent's client as an MCP server on stdio. stdout carries only the protocol;
 * retries and warnings go to stderr. Ends when the client closes stdin.
 */
export async function runMcpServer(
  session: Session,
  env: Env,
  options: { channel?: boolean } = {},
): Promise<void> {
  const server = new McpServer(
    { name: 'hark', version: VERSION },
    options.channel
      ? { instructions: INSTRUCTIONS + CHANNEL_INSTRUCTIONS, capabilities: CHANNEL_CAPABILITIES }
      : { instructions: INSTRUCTIONS },
  )
  const client = session.client
  const everyMs = progressEveryMs(env)
  registerTools(server, TOOLS, {
    session,
    client,
    env,
    mcp: server.server,
    pendingSecrets: new Map(),
    progressEveryMs: everyMs,
  })
  registerResources(server, client)
  const stopChannel = options.channel ? attachChannel(server.server, session, env) : undefined
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve)
    process.stdin.once('close', resolve)
    server.server.onclose = resolve
  })
  await server.connect(new StdioServerTransport())
  await closed
  await stopChannel?.()
  await server.close()
}
