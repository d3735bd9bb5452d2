import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js'
import type { AgentClient } from '../../agent/client.ts'
import { describeFailure } from '../../agent/failures.ts'

/**
 * The channel's state a model (or its client's UI) can look at without calling a tool: what is
 * pinned, and which questions still wait for the person. Read fresh from the server each time;
 * both are listed, so a client can offer them to attach to the conversation.
 */
interface HarkResource {
  name: string
  uri: string
  title: string
  description: string
  read(client: AgentClient): Promise<unknown>
}

const RESOURCES: readonly HarkResource[] = [
  {
    name: 'pins',
    uri: 'hark://pins',
    title: 'Pinned statuses',
    description:
      "The channel's pinned messages (status, progress, checklists), by key, as GET /v1/pins returns them.",
    read: (client) => client.pins(),
  },
  {
    name: 'asks',
    uri: 'hark://asks',
    title: 'Open questions',
    description:
      'The questions still waiting for the person, as GET /v1/asks returns them: wait_for_answer or cancel them by id.',
    read: (client) => client.asks(),
  },
]

export function registerResources(server: McpServer, client: AgentClient): void {
  for (const r of RESOURCES) {
    server.registerResource(
      r.name,
      r.uri,
      { title: r.title, description: r.description, mimeType: 'application/json' },
      async (uri): Promise<ReadResourceResult> => {
        let data: unknown
        try {
          data = await r.read(client)
        } catch (error) {
          // As a tool's error: one line for the client, the detail (a bug's) on stderr.
          const failure = describeFailure(error)
          if (failure.detail) process.stderr.write(`hark mcp: ${r.uri}: ${failure.detail}\n`)
          throw new Error(failure.message)
        }
        return {
          contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(data) }],
        }
      },
    )
  }
}
