import { type Static, type TProperties, Type as t } from '@sinclair/typebox'
import { wrappedResponse } from '../core/docs.ts'
import { LIMITS } from './limits.ts'

/**
 * TypeBox schemas of message bodies and blocks. They document the API (OpenAPI is generated
 * from them) and drive validation; `blocks.ts` adds the rules a schema cannot say.
 * Known blocks allow extra properties so newer agents can add fields older servers keep.
 */
const open = { additionalProperties: true } as const
const str = (max: number = LIMITS.textChars) => t.String({ maxLength: max })

export const BlockId = t.String({ minLength: 1, maxLength: LIMITS.blockIdChars })

const base = { id: t.Optional(BlockId) }

/** A known block: its `type`, maybe an `id`, its own fields; open to fields it does not know. */
const block = <K extends string, P extends TProperties>(type: K, fields: P) =>
  t.Object({ type: t.Literal(type), ...base, ...fields }, open)

/** The fields every input block has: a label, and whether it must be filled in. */
const input = {
  label: t.Optional(str(LIMITS.titleChars)),
  required: t.Optional(t.Boolean()),
}

export const KnownBlocks = {
  markdown: block('markdown', { text: str() }),
  heading: block('heading', { text: str(LIMITS.titleChars) }),
  code: block('code', { code: str(), language: t.Optional(str(64)) }),
  link: block('link', {
    url: t.String({ maxLength: 4096, pattern: '^(https?|mailto):' }),
    label: t.Optional(str(LIMITS.titleChars)),
  }),
  progress: block('progress', {
    value: t.Number(),
    max: t.Optional(t.Number({ exclusiveMinimum: 0 })),
    label: t.Optional(str(LIMITS.titleChars)),
  }),
  keyvalue: block('keyvalue', {
    items: t.Array(t.Object({ key: str(LIMITS.titleChars), value: str() }, open), {
      maxItems: 500,
    }),
  }),
  table: block('table', {
    columns: t.Array(str(LIMITS.titleChars), { maxItems: 100 }),
    rows: t.Array(t.Array(t.Union([str(), t.Number()])), { maxItems: 5000 }),
  }),
  image: block('image', {
    file_id: t.String({ minLength: 1, maxLength: 64 }),
    name: t.Optional(str(255)),
    alt: t.Optional(str(LIMITS.titleChars)),
  }),
  file: block('file', {
    file_id: t.String({ minLength: 1, maxLength: 64 }),
    name: str(255),
    mime: t.Optional(str(255)),
    size: t.Optional(t.Integer({ minimum: 0 })),
  }),
  html: block('html', {
    html: str(LIMITS.bodyBytes),
    label: t.Optional(str(LIMITS.titleChars)),
    height: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 2000 })),
    question: t.Optional(t.Boolean()),
  }),
  choice: block('choice', {
    ...input,
    options: t.Array(
      t.Object(
        {
          label: t.String({ minLength: 1, maxLength: LIMITS.titleChars }),
          value: t.Optional(t.String({ minLength: 1, maxLength: LIMITS.titleChars })),
          description: t.Optional(str(LIMITS.titleChars * 2)),
          danger: t.Optional(t.Boolean()),
        },
        open,
      ),
      { minItems: 1, maxItems: LIMITS.choiceOptions },
    ),
    multi: t.Optional(t.Boolean()),
    other: t.Optional(t.Boolean()),
    default: t.Optional(t.Union([str(LIMITS.titleChars), t.Array(str(LIMITS.titleChars))])),
  }),
  text_input: block('text_input', {
    ...input,
    placeholder: t.Optional(str(LIMITS.titleChars)),
    multiline: t.Optional(t.Boolean()),
    default: t.Optional(str()),
  }),
  number_input: block('number_input', {
    ...input,
    min: t.Optional(t.Number()),
    max: t.Optional(t.Number()),
    default: t.Optional(t.Number()),
  }),
  toggle: block('toggle', {
    label: t.String({ minLength: 1, maxLength: LIMITS.titleChars }),
    default: t.Optional(t.Boolean()),
  }),
  confirm: block('confirm', {
    label: t.String({ minLength: 1, maxLength: LIMITS.titleChars }),
    description: t.Optional(str(LIMITS.titleChars * 2)),
    danger: t.Optional(t.Boolean()),
  }),
  // An agent asks to be allowed one action (PRODUCT.md "Approvals"). `input` is the tool's own
  // input, kept verbatim whatever its shape: the person sees it and its hash binds the answer.
  approval: block('approval', {
    tool: t.String({ minLength: 1, maxLength: LIMITS.titleChars }),
    input: t.Unknown({ description: "the tool's input, any JSON, kept verbatim" }),
    summary: t.Optional(str(LIMITS.titleChars)),
    cwd: t.Optional(str(4096)),
    session: t.Optional(str(LIMITS.titleChars)),
    scopes: t.Optional(
      t.Array(t.Union([t.Literal('once'), t.Literal('session')]), { minItems: 1, maxItems: 2 }),
    ),
    // What "Allow for this session" makes the harness remember, in words (shown on the card).
    session_rules: t.Optional(t.Array(str(LIMITS.titleChars), { maxItems: 20 })),
    danger: t.Optional(t.Boolean()),
  }),
  // Made only by the server (POST /v1/secrets): a body that carries one is refused (blocks.ts).
  secret_request: block('secret_request', {
    request_id: t.String(),
    name: str(LIMITS.titleChars),
    fingerprint: t.String(),
    status: t.Optional(t.String()),
  }),
} as const

export type KnownBlockType = keyof typeof KnownBlocks
export type KnownBlock = { [K in KnownBlockType]: Static<(typeof KnownBlocks)[K]> }[KnownBlockType]

/** Any block: a known one, or an unknown type stored as given. */
export const AnyBlock = t.Object(
  { type: t.String({ minLength: 1, maxLength: 64 }), id: t.Optional(BlockId) },
  { $id: 'Block', ...open, description: 'A block; see the spec for the known types' },
)
/** A block as given: `type`, maybe `id`, and the fields of its type. */
export type Block = Static<typeof AnyBlock> & Record<string, unknown>

export const MessageBody = t.Object(
  {
    title: t.Optional(t.String({ maxLength: LIMITS.titleChars })),
    text: t.Optional(t.String({ maxLength: LIMITS.textChars })),
    blocks: t.Optional(t.Array(AnyBlock, { maxItems: LIMITS.blocks })),
  },
  { $id: 'MessageBody', additionalProperties: false },
)
export type MessageBody = Omit<Static<typeof MessageBody>, 'blocks'> & { blocks?: Block[] }

export const SendRequest = t.Object(
  {
    body: MessageBody,
    silent: t.Optional(t.Boolean()),
    expires_in: t.Optional(
      t.Number({ exclusiveMinimum: 0, maximum: LIMITS.expiresInSeconds, description: 'seconds' }),
    ),
    proof: t.Optional(
      t.Boolean({
        description: 'a question whose answer the person signs with a passkey (ask.request_hash)',
      }),
    ),
  },
  { $id: 'SendRequest' },
)
export type SendRequest = Omit<Static<typeof SendRequest>, 'body'> & { body: MessageBody }

export const ReplaceRequest = t.Object({ body: MessageBody }, { $id: 'ReplaceRequest' })

/** `block_patches`: `[{ id, ...fields }]`, or `{ [id]: { ...fields } }`. Merged by block id. */
export const BlockPatches = t.Union(
  [
    t.Array(t.Object({ id: BlockId }, open), { maxItems: LIMITS.blocks }),
    // `additionalProperties`, not `t.Record`: the same check, and generated clients read it.
    t.Object({}, { additionalProperties: t.Object({}, open) }),
  ],
  { $id: 'BlockPatches' },
)

export const EditRequest = t.Object(
  {
    title: t.Optional(t.Union([t.String({ maxLength: LIMITS.titleChars }), t.Null()])),
    text: t.Optional(t.Union([t.String({ maxLength: LIMITS.textChars }), t.Null()])),
    blocks: t.Optional(t.Array(AnyBlock, { maxItems: LIMITS.blocks })),
    block_patches: t.Optional(BlockPatches),
  },
  { $id: 'EditRequest', additionalProperties: false },
)
export type EditRequest = Omit<Static<typeof EditRequest>, 'blocks' | 'block_patches'> & {
  blocks?: Block[]
  block_patches?:
    | ({ id: string } & Record<string, unknown>)[]
    | Record<string, Record<string, unknown>>
}

export const AckState = t.Union([t.Literal('seen'), t.Literal('working'), t.Literal('done')], {
  $id: 'AckState',
})
export type AckState = Static<typeof AckState>
export const StateRequest = t.Object({ state: AckState }, { $id: 'StateRequest' })

/** The passkey's WebAuthn assertion over an answer's claim (src/shared/proof.ts). */
const assertionFields = {
  credential_id: t.String({ minLength: 1, maxLength: 1024 }),
  authenticator_data: t.String({ minLength: 1, maxLength: 4096 }),
  client_data_json: t.String({ minLength: 1, maxLength: 4096 }),
  signature: t.String({ minLength: 1, maxLength: 2048 }),
  user_handle: t.Optional(t.String({ maxLength: 1024 })),
  answered_at: t.Integer({ minimum: 0, description: "the app's clock when signed, ms" }),
}

export const AnswerProof = t.Object(assertionFields, {
  $id: 'AnswerProof',
  additionalProperties: false,
})

/** A stored answer's proof, as the agent reads it: a batch answer's names the whole list. */
export const StoredProof = t.Object(
  {
    ...assertionFields,
    batch: t.Optional(
      t.Object({
        items: t.Array(t.String(), {
          description:
            'answered with one gesture for several questions: the SHA-256 (hex) of each claim, in the signed order (docs/security.md "Batch answers")',
        }),
      }),
    ),
  },
  { $id: 'StoredProof' },
)

export const AskInfo = t.Object(
  {
    status: t.Union([
      t.Literal('open'),
      t.Literal('answered'),
      t.Literal('expired'),
      t.Literal('cancelled'),
    ]),
    expires_at: t.Optional(t.Integer()),
    answered_at: t.Optional(t.Integer()),
    answer: t.Optional(t.Unknown()),
    request_hash: t.Optional(
      t.String({
        description: 'approvals: SHA-256 (hex) of the canonical JSON of { tool, input }',
      }),
    ),
    reason: t.Optional(t.String({ description: 'why a cancelled question was withdrawn' })),
    proof: t.Optional(StoredProof),
  },
  { $id: 'AskInfo' },
)
export type AskInfo = Static<typeof AskInfo>

export const Message = t.Object(
  {
    id: t.String(),
    channel_id: t.String(),
    sender: t.Union([t.Literal('agent'), t.Literal('human')]),
    created_at: t.Integer(),
    updated_at: t.Integer(),
    body: MessageBody,
    silent: t.Optional(t.Boolean()),
    ask: t.Optional(AskInfo),
    state: t.Optional(t.Union([AckState, t.Null()])),
    pin: t.Optional(t.String({ description: 'the pin key, on pinned messages' })),
  },
  { $id: 'Message' },
)
export type Message = Omit<Static<typeof Message>, 'body'> & { body: MessageBody }

export const DeletedMessage = t.Object(
  { id: t.String(), deleted: t.Literal(true) },
  { $id: 'DeletedMessage' },
)
export type DeletedMessage = Static<typeof DeletedMessage>

export const MessageResponse = wrappedResponse('MessageResponse', 'message', Message)

export const FeedResponse = t.Object(
  {
    messages: t.Array(t.Union([Message, DeletedMessage])),
    cursor: t.Integer(),
    has_more: t.Boolean(),
  },
  { $id: 'FeedResponse' },
)
export type FeedResponse = Static<typeof FeedResponse>

export const FeedQuery = t.Object({
  since: t.Optional(t.String({ description: 'cursor; start with 0' })),
  wait: t.Optional(t.String({ description: 'seconds to hold the request, at most 55' })),
  sender: t.Optional(t.String({ description: '`human` or `agent`' })),
  peek: t.Optional(t.String({ description: '`1`: do not mark messages seen' })),
  limit: t.Optional(t.String({ description: `page size, at most ${LIMITS.feedPage}` })),
})
export type FeedQuery = Static<typeof FeedQuery>

export const Ok = t.Object({ ok: t.Literal(true) }, { $id: 'Ok' })
