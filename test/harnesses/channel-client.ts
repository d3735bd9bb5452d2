import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Message } from '../../src/messages/schema.ts'
import { HARK_MCP } from '../mcp/live.ts'
import { type Home, nextQuestion, openAskIds, type SignedHark } from './signed.ts'

/**
 * `hark mcp --channel` driven by an MCP client that speaks exactly Claude Code 2.1.330's channel
 * protocol (read from the binary; docs/decisions.md "Claude Code channels"): the same initialize
 * (protocol 2025-11-25, elicitation and roots capabilities), `notifications/claude/channel/
 * permission_request` with `{request_id, tool_name, description, input_preview}` out, and
 * `notifications/claude/channel/permission` `{request_id, behavior}` and `notifications/claude/
 * channel` `{content, meta}` back. The real binary refuses every channel offline (its remote
 * feature flag and account entitlement), so this client stands in for it.
 */
export const PERMISSION = 'notifications/claude/channel/permission'
export const EVENT = 'notifications/claude/channel'
export const CHANNEL_SESSION = 'session-channel-test'

export type Params = Record<string, unknown>

export interface ChannelClient {
  client: Client
  /** Every notification the channel sent, in order. */
  received: { method: string; params: Params }[]
  /** What the channel wrote on stderr so far. */
  stderr(): string
  /** The first notification of `method` received that `match`es (waits up to 20 s). */
  notified(method: string, match?: (p: Params) => boolean): Promise<Params>
  /** Claude Code opens its dialog for the shell command `command` and relays it. */
  permissionRequest(requestId: string, command?: string): Promise<void>
  /** The same, and the card the person gets for it. */
  prompt(requestId: string, command?: string): Promise<Message>
  /** The decisions relayed (`{request_id, behavior}`), in order. */
  decisions(): Params[]
}

/** The channel's client without the signed server's helpers (`prompt`). */
export type ChannelSession = Omit<ChannelClient, 'prompt'>

/**
 * `hark mcp --channel` started as Claude Code starts it: `env` is the server's (HOME, HARK_URL,
 * HARK_TOKEN, the session's id and project), PATH added.
 */
export async function startChannelClient(env: Record<string, string>): Promise<ChannelSession> {
  const client = new Client(
    { name: 'claude-code', version: '2.1.330' },
    { capabilities: { elicitation: { form: {}, url: {} }, roots: { listChanged: true } } },
  )
  const received: ChannelClient['received'] = []
  client.fallbackNotificationHandler = async (n) => {
    received.push({ method: n.method, params: (n.params ?? {}) as Params })
  }
  let stderr = ''
  const transport = new StdioClientTransport({
    command: HARK_MCP.command,
    args: [...HARK_MCP.args, '--channel'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stderr: 'pipe',
  })
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  await client.connect(transport)
  return {
    client,
    received,
    stderr: () => stderr,
    async notified(method, match = () => true) {
      const deadline = Date.now() + 20_000
      while (Date.now() < deadline) {
        const found = received.find((n) => n.method === method && match(n.params))
        if (found) return found.params
        await Bun.sleep(20)
      }
      throw new Error(`no ${method}; received: ${JSON.stringify(received)}`)
    },
    permissionRequest: (requestId: string, command = 'touch made-by-hark') =>
      client.notification({
        method: 'notifications/claude/channel/permission_request',
        params: {
          request_id: requestId,
          tool_name: 'Bash',
          description: command,
          input_preview: `command: ${command}\ndescription: Make a file`,
        },
      }),
    decisions: () => received.filter((n) => n.method === PERMISSION).map((n) => n.params),
  }
}

/** `hark mcp --channel` started as Claude Code starts it (HOME `box`, HARK_URL `url`). */
export async function connectChannel(
  h: SignedHark,
  box: Home,
  url: string,
  extraEnv: Record<string, string> = {},
): Promise<ChannelClient> {
  // As Claude Code starts its MCP servers: the session's id and project in the environment.
  const session = await startChannelClient({
    HOME: box.home,
    HARK_URL: url,
    HARK_TOKEN: h.env.HARK_TOKEN,
    CLAUDE_CODE_SESSION_ID: CHANNEL_SESSION,
    CLAUDE_PROJECT_DIR: box.work,
    ...extraEnv,
  })
  return {
    ...session,
    async prompt(requestId, command) {
      const before = await openAskIds(h)
      await session.permissionRequest(requestId, command)
      return nextQuestion(h, before, new Promise(() => {}))
    },
  }
}
