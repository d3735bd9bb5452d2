/**
 * A loopback stand-in for the Anthropic Messages API, enough for the real Claude Code CLI (2.1.330)
 * to run a scripted conversation offline. Measured with strace: with the isolation env of
 * claude-code.ts, a `claude -p` run connects only here and only ever sends
 * `POST /v1/messages?beta=true` with `stream: true`, answered with server-sent events. The other
 * endpoints below (non-streaming, count_tokens, the `/api/hello` preconnect) are answered so that a
 * run with a different setting still gets a well-formed reply instead of hanging on retries.
 * Every request body is recorded, so a test can read what Claude Code sent back to the "model":
 * a command's output, or the message a PermissionRequest hook denied it with.
 */

/** A JSON value as parsed from a request body. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

/** One tool call the "model" makes: the tool's name and its input object. */
export interface StubToolUse {
  name: string
  input: JsonObject
}

/**
 * One scripted model reply. Plain text ends the turn (`stop_reason: "end_turn"`); a tool call ends
 * it with `stop_reason: "tool_use"`, after optional text, as the real model often does.
 */
export type StubTurn = { text: string } | { tool_use: StubToolUse; text?: string }

/** One recorded `POST /v1/messages` body (a model turn or a request Claude Code makes aside). */
export interface StubRequest {
  path: string
  body: JsonObject
}

/** What the "model" received for one of its tool calls. */
export interface StubToolResult {
  /** The result's text (text blocks joined, as MCP tools return a list of them). */
  content: string
  isError: boolean
}

export interface AnthropicStub {
  /** `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL` (Claude Code appends `/v1/messages`). */
  baseUrl: string
  requests: StubRequest[]
  /** The tool_result Claude Code sent for the tool call of turn `turn` (0-based), if any yet. */
  toolResult(turn: number): StubToolResult | undefined
  stop(): void
}

/** `id` of the tool call of the n-th scripted turn (0-based), as the stub names it. */
export const toolUseId = (turn: number) => `toolu_stub_${turn}`

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const sse = (event: string, data: JsonObject) =>
  `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`

const usage = { input_tokens: 1, output_tokens: 1 }

/** The content blocks of a turn, in the order the model would emit them. */
const blocksOf = (turn: StubTurn, index: number): JsonObject[] => {
  const blocks: JsonObject[] = []
  if (turn.text !== undefined) blocks.push({ type: 'text', text: turn.text })
  if ('tool_use' in turn) {
    const { name, input } = turn.tool_use
    blocks.push({ type: 'tool_use', id: toolUseId(index), name, input })
  }
  return blocks
}

const stopReasonOf = (turn: StubTurn) => ('tool_use' in turn ? 'tool_use' : 'end_turn')

/**
 * The event stream of one reply, shaped as the API sends it: the message opens empty, each block
 * is started, filled by deltas and stopped, then `message_delta` carries the stop reason. A tool
 * call's input travels only as `input_json_delta` text, never in `content_block_start`.
 */
const streamOf = (turn: StubTurn, index: number, model: string) => {
  const message = {
    id: `msg_stub_${index}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage,
  }
  let body = sse('message_start', { message })
  body += sse('ping', {})
  blocksOf(turn, index).forEach((block, i) => {
    if (block.type === 'text') {
      body += sse('content_block_start', { index: i, content_block: { type: 'text', text: '' } })
      body += sse('content_block_delta', {
        index: i,
        delta: { type: 'text_delta', text: block.text ?? '' },
      })
    } else {
      body += sse('content_block_start', {
        index: i,
        content_block: { ...block, input: {} },
      })
      body += sse('content_block_delta', {
        index: i,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      })
    }
    body += sse('content_block_stop', { index: i })
  })
  body += sse('message_delta', {
    delta: { stop_reason: stopReasonOf(turn), stop_sequence: null },
    usage: { output_tokens: 1 },
  })
  body += sse('message_stop', {})
  return body
}

/**
 * Which scripted turn a request asks for: the number of assistant messages already in its
 * conversation. Counting requests instead would hand the next turn to a retried request (Claude
 * Code retries a failed stream) and to requests made aside, so a loaded machine could reorder the
 * script; the conversation itself says where it stands.
 */
const turnIndexOf = (body: JsonObject) => {
  const messages = body.messages
  if (!Array.isArray(messages)) return 0
  return messages.filter((m) => isObject(m) && m.role === 'assistant').length
}

/** A tool_result's content as text: a string, or a list of blocks whose text is joined. */
const textOf = (content: Json | undefined): string => {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : ''))
    .join('')
}

/**
 * Starts the stub on an ephemeral loopback port. Past the script (or for a request without tools,
 * which Claude Code would only make aside, e.g. for a title) it answers a short text that ends the
 * turn, so a misbehaving run still ends instead of looping.
 */
export function startAnthropicStub(turns: StubTurn[]): AnthropicStub {
  const requests: StubRequest[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      // Claude Code preconnects with `HEAD /api/hello` when nonessential traffic is allowed.
      if (path === '/api/hello') return new Response(null, { status: 200 })
      if (req.method !== 'POST' || !path.startsWith('/v1/messages')) {
        return Response.json(
          { type: 'error', error: { type: 'not_found_error', message: `stub: no ${path}` } },
          { status: 404 },
        )
      }
      const parsed = (await req.json()) as Json
      const body = isObject(parsed) ? parsed : {}
      requests.push({ path, body })
      if (path === '/v1/messages/count_tokens') return Response.json({ input_tokens: 1 })
      const hasTools = Array.isArray(body.tools) && body.tools.length > 0
      const index = turnIndexOf(body)
      const turn: StubTurn = (hasTools ? turns[index] : undefined) ?? { text: 'done' }
      const model = typeof body.model === 'string' ? body.model : 'stub-model'
      if (body.stream !== true) {
        return Response.json({
          id: `msg_stub_${index}`,
          type: 'message',
          role: 'assistant',
          model,
          content: blocksOf(turn, index),
          stop_reason: stopReasonOf(turn),
          stop_sequence: null,
          usage,
        })
      }
      return new Response(streamOf(turn, index, model), {
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
      })
    },
  })

  const toolResult = (turn: number): StubToolResult | undefined => {
    const id = toolUseId(turn)
    for (const { body } of requests) {
      if (!Array.isArray(body.messages)) continue
      for (const message of body.messages) {
        if (!isObject(message) || message.role !== 'user' || !Array.isArray(message.content)) {
          continue
        }
        for (const block of message.content) {
          if (!isObject(block) || block.type !== 'tool_result' || block.tool_use_id !== id) continue
          return { content: textOf(block.content), isError: block.is_error === true }
        }
      }
    }
    return undefined
  }

  return {
    baseUrl: `http://127.0.0.1:${server.port}`,
    requests,
    toolResult,
    stop: () => server.stop(true),
  }
}
