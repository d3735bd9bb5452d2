/**
 * The part of docs/api.md the OpenAPI document cannot give: what the service is for and the
 * rules every route shares. scripts/api-doc.ts puts it above the generated reference.
 */
export const API_INTRO = `
Hark is a message channel between an automated agent and the person it works for. This is its
HTTP API: the contract that \`hark\` (the command line and MCP server), the web app and any other
client use. The reference below is generated from the OpenAPI document every server serves at
\`GET /v1/openapi.json\` (OpenAPI 3.1, built from the routes' own schemas), so it says what the
code does. Where the routes leave something open, [decisions.md](decisions.md) says what Hark
does; sizes and rates are in [limits.md](limits.md); who may do what, in
[security.md](security.md).

## How it works

1. An agent sends messages to the person (\`POST /v1/messages\`): a title, text and typed
   content blocks. Sending notifies the person's devices unless \`silent\` is true.
2. A message with at least one input block is a question. The person answers it in the app; the
   agent reads the answer by long-polling \`GET /v1/asks/{id}\`.
3. The agent reads what the person writes (\`GET /v1/messages\`, a change feed) and can
   acknowledge each message with a state: \`seen\`, \`working\` or \`done\`.
4. The agent can edit, replace or delete its messages, keep pinned messages under a key, upload
   and download files, and ask for a secret, end-to-end encrypted.
5. \`GET /health\` and \`GET /v1/info\` are public.

## Conventions

- **Paths and versions.** Every route is under \`/v1\`, except \`GET /health\`. Bodies are JSON
  (\`Content-Type: application/json\`) unless a route says otherwise (file uploads take the raw
  bytes). Unknown fields in a body are refused (400, naming the field).
- **Who is calling.** An agent sends \`Authorization: Bearer hark_agent_…\`: the token is its
  channel, so agent routes take no channel id. \`hark init\` (pairing, approved in the app),
  \`hark join LINK\` and \`hark admin channel add\` give one. The person's routes are under
  \`/v1/app/\`: a browser session cookie (set by a passkey or email sign-in) or a person token
  (\`Authorization: Bearer\`, made in the app or by \`hark admin token add\`). A missing, unknown or
  revoked token is 401; a valid one of the wrong kind is 403. A write with a session cookie must
  come from the server's own origin.
- **Long-polls.** \`GET /v1/messages\`, \`GET /v1/asks/{id}\`, \`GET /v1/app/feed\`,
  \`GET /v1/app/channels/{id}/messages\`, \`GET /v1/secrets/{id}\` and \`POST /v1/pair/token\` take
  \`wait\` (seconds, at most 55): the request is held until something changes or the wait ends,
  then answered (empty, or unchanged); ask again. Keep proxies' read timeouts above 55 s.
- **The change feed.** \`GET /v1/messages?since=CURSOR\` answers \`{ messages, cursor }\`; pass
  \`cursor\` as \`since\` next time (start with 0). Every change (a new message, an edit, an
  answer, an acknowledgment, a delete) comes once, in order; \`has_more\` says to read again at
  once. Reading marks the person's messages \`seen\` unless \`peek=1\`.
- **Questions.** Input blocks (\`choice\`, \`text_input\`, \`number_input\`, \`toggle\`,
  \`confirm\`, \`approval\`) need an \`id\`, unique in the message. \`ask.status\` is \`open\`,
  then \`answered\`, \`expired\` (after \`expires_in\` seconds: each input takes its
  \`default\`; an approval is never allowed by silence) or \`cancelled\` (by the agent,
  \`POST /v1/messages/{id}/cancel\`). With one input the answer is its value; with several, an
  object keyed by block id; a \`multi\` choice answers an array. A question that is no longer
  open cannot be answered or cancelled again (409).
- **Approvals and signed answers.** An \`approval\` block asks to be allowed one action (\`tool\`
  and its \`input\`); \`ask.request_hash\` is SHA-256 of the canonical JSON of
  \`{ tool, input }\`. The app can sign an answer with the person's passkey (\`proof\`): the agent
  checks it with keys it pinned when it connected, trusting nothing from the server.
- **Blocks.** Every block has a \`type\` and may have an \`id\` (1 to 64 characters) by which
  \`block_patches\` edit it later. Known types are checked (a malformed one is 400 naming the
  field); unknown types are stored as given, and apps show a placeholder.
- **Safe retries.** An agent's \`POST\`, \`PUT\` or \`PATCH\` may carry
  \`Idempotency-Key: ANY-UNIQUE-STRING\`: repeated within 24 h with the same request, it answers
  the first result again (\`Idempotent-Replayed: true\`) and writes nothing; the same key with
  another request is 409.
- **Rates.** An agent's writes are limited per channel (120 a minute by default,
  \`HARK_WRITE_LIMIT\`); past it, 429 with \`Retry-After\`.
`
