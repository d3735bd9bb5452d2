/**
 * A loopback stand-in for the OpenAI Responses API, enough for the real Codex CLI to run a scripted
 * conversation offline. Codex (0.169.0) only speaks `wire_api = "responses"`: every model turn is one
 * `POST {base_url}/responses` with `stream: true`, answered with server-sent events. Each request body
 * is recorded, so a test can read what Codex sent back to the "model" (a command's output, or the
 * message a PermissionRequest hook denied it with).
 */

/** One scripted model reply: the items it emits, in order, then `response.completed`. */
export type StubTurn =
  /** Ask Codex to run a shell command through its `exec_command` tool. */
  | { type: 'exec'; cmd: string; justification?: string; sandboxPermissions?: 'require_escalated' }
  /** Plain assistant text; ends the turn, since no tool call follows. */
  | { type: 'text'; text: string }

/** A JSON value as parsed from a request body. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** One recorded `POST /responses` body. */
export interface StubRequest {
  body: { [key: string]: Json }
}

/** What a test gets back: the base URL to put in Codex's provider config, the recorded requests. */
export interface OpenAIStub {
  /** `http://127.0.0.1:PORT/v1`, the `base_url` of the Codex model provider. */
  baseUrl: string
  requests: StubRequest[]
  /** The `output` Codex returned for the tool call `call_id` (from a later request), if any. */
  toolOutput(callId: string): string | undefined
  stop(): void
}

/** `call_id` of the n-th scripted turn (0-based), so tests can find its output. */
export const callId = (turn: number) => `call_${turn}`

const sse = (event: string, data: object) =>
  `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`

/** The output item a scripted turn emits, shaped as Codex's `ResponseItem` deserializer wants it. */
const itemFor = (turn: StubTurn, index: number) => {
  if (turn.type === 'text') {
    return {
      type: 'message',
      id: `msg_${index}`,
      role: 'assistant',
      content: [{ type: 'output_text', text: turn.text, annotations: [] }],
    }
  }
  const args: Record<string, string> = { cmd: turn.cmd }
  if (turn.justification) args.justification = turn.justification
  if (turn.sandboxPermissions) args.sandbox_permissions = turn.sandboxPermissions
  return {
    type: 'function_call',
    id: `fc_${index}`,
    call_id: callId(index),
    name: 'exec_command',
    // The Responses API sends function arguments as a JSON string, not an object.
    arguments: JSON.stringify(args),
  }
}

/** The whole event stream of one reply. Sent at once: Codex parses it incrementally anyway. */
const streamFor = (turn: StubTurn, index: number) => {
  const id = `resp_${index}`
  const item = itemFor(turn, index)
  let body = sse('response.created', { response: { id } })
  body += sse('response.output_item.added', { output_index: 0, item })
  if (turn.type === 'text') {
    // Deltas are what `codex exec` prints as it streams; the `done` item is what it keeps.
    body += sse('response.output_text.delta', {
      item_id: item.id,
      output_index: 0,
      delta: turn.text,
    })
  }
  body += sse('response.output_item.done', { output_index: 0, item })
  body += sse('response.completed', {
    response: {
      id,
      usage: {
        input_tokens: 1,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 1,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 2,
      },
    },
  })
  return body
}

const isObject = (value: Json | undefined): value is { [key: string]: Json } =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Starts the stub on an ephemeral loopback port. Turns are served in order, one per model request;
 * past the script it answers with a short text, so a misbehaving run still ends instead of looping.
 * Requests Codex makes on the side (title generation, memory) would also consume turns, so a test
 * should only script what its config enables (the harness disables those extras).
 */
export function startOpenAIStub(turns: StubTurn[]): OpenAIStub {
  const requests: StubRequest[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (req.method === 'GET' && path.endsWith('/models')) {
        // Codex can list models to fill in metadata; an empty list makes it use its fallback.
        return Response.json({ object: 'list', data: [], models: [] })
      }
      if (req.method !== 'POST' || !path.endsWith('/responses')) {
        return new Response('not found', { status: 404 })
      }
      const parsed = (await req.json()) as Json
      requests.push({ body: isObject(parsed) ? parsed : {} })
      const index = requests.length - 1
      const turn = turns[index] ?? { type: 'text', text: 'done' }
      return new Response(streamFor(turn, index), {
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
      })
    },
  })

  const toolOutput = (id: string) => {
    for (const { body } of requests) {
      const input = body.input
      if (!Array.isArray(input)) continue
      for (const item of input) {
        if (!isObject(item) || item.type !== 'function_call_output' || item.call_id !== id) continue
        const output = item.output
        if (typeof output === 'string') return output
        // Newer Codex builds may send output as content items; join their text.
        if (Array.isArray(output)) {
          return output
            .map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : ''))
            .join('')
        }
      }
    }
    return undefined
  }

  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    requests,
    toolOutput,
    stop: () => server.stop(true),
  }
}
