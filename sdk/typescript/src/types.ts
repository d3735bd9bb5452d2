/**
 * The records and blocks of the Hark agent API (spec: agent-messaging-api.md, and PRODUCT.md's
 * decisions). Known blocks are typed one by one; a block type the server does not know yet is
 * still accepted (`UnknownBlock`), as the server accepts and stores it.
 */

interface BlockBase {
  /** 1 to 64 characters; required on input blocks (it keys the answer), unique in a message. */
  id?: string
}

// Display blocks.
export interface MarkdownBlock extends BlockBase {
  type: 'markdown'
  text: string
}
export interface HeadingBlock extends BlockBase {
  type: 'heading'
  text: string
}
export interface CodeBlock extends BlockBase {
  type: 'code'
  code: string
  language?: string
}
export interface LinkBlock extends BlockBase {
  type: 'link'
  /** http(s) or mailto. */
  url: string
  label?: string
}
export interface ProgressBlock extends BlockBase {
  type: 'progress'
  value: number
  /** Positive. */
  max?: number
  label?: string
}
export interface KeyValueBlock extends BlockBase {
  type: 'keyvalue'
  items: { key: string; value: string }[]
}
export interface TableBlock extends BlockBase {
  type: 'table'
  columns: string[]
  /** Each row has as many cells as there are columns. */
  rows: (string | number)[][]
}
export interface ImageBlock extends BlockBase {
  type: 'image'
  /** From `upload()`, in the same channel. */
  file_id: string
  name?: string
  alt?: string
}
export interface FileBlock extends BlockBase {
  type: 'file'
  file_id: string
  name: string
  mime?: string
  size?: number
}
export interface HtmlBlock extends BlockBase {
  type: 'html'
  html: string
  label?: string
  /** Pixels, at most 2000; otherwise it grows to fit. */
  height?: number
  /** An embed answered by its `reply(value)`; needs an `id`. */
  question?: boolean
}

// Input blocks: a message with at least one is a question.
export interface ChoiceOption {
  label: string
  /** What the answer carries; defaults to `label`. */
  value?: string
  description?: string
  danger?: boolean
}
export interface ChoiceBlock extends BlockBase {
  type: 'choice'
  id: string
  options: ChoiceOption[]
  label?: string
  /** Several picks: the answer is then an array. */
  multi?: boolean
  /** A typed answer besides the options. */
  other?: boolean
  required?: boolean
  /** The answer if the question expires. */
  default?: string | string[]
}
export interface TextInputBlock extends BlockBase {
  type: 'text_input'
  id: string
  label?: string
  placeholder?: string
  multiline?: boolean
  required?: boolean
  default?: string
}
export interface NumberInputBlock extends BlockBase {
  type: 'number_input'
  id: string
  label?: string
  min?: number
  max?: number
  required?: boolean
  default?: number
}
export interface ToggleBlock extends BlockBase {
  type: 'toggle'
  id: string
  label: string
  default?: boolean
}
export interface ConfirmBlock extends BlockBase {
  type: 'confirm'
  id: string
  /** The button text. */
  label: string
  description?: string
  danger?: boolean
}
/** An agent asks to be allowed one action. The only input of its message; no default. */
export interface ApprovalBlock extends BlockBase {
  type: 'approval'
  id: string
  tool: string
  /** The tool's input, any JSON, kept verbatim. */
  input: unknown
  /** One line; the notification text. */
  summary?: string
  cwd?: string
  session?: string
  scopes?: ['once'] | ['once', 'session']
  danger?: boolean
}

/** A block type this client does not know (a newer server may): stored and shown as given. */
export interface UnknownBlock extends BlockBase {
  type: string
  [field: string]: unknown
}

export type DisplayBlock =
  | MarkdownBlock
  | HeadingBlock
  | CodeBlock
  | LinkBlock
  | ProgressBlock
  | KeyValueBlock
  | TableBlock
  | ImageBlock
  | FileBlock
  | HtmlBlock
export type InputBlock =
  | ChoiceBlock
  | TextInputBlock
  | NumberInputBlock
  | ToggleBlock
  | ConfirmBlock
  | ApprovalBlock
export type KnownBlock = DisplayBlock | InputBlock
export type Block = KnownBlock | UnknownBlock

export const INPUT_TYPES: readonly string[] = [
  'choice',
  'text_input',
  'number_input',
  'toggle',
  'confirm',
  'approval',
]

/** Whether a block asks the person for something (an html block with `question: true` too). */
export const isInputBlock = (block: { type: string; question?: unknown }): boolean =>
  INPUT_TYPES.includes(block.type) || (block.type === 'html' && block.question === true)

// Answers.
/** The answer to an approval. `scope` only from the block's `scopes`. */
export interface ApprovalAnswer {
  decision: 'allow' | 'deny'
  scope?: 'once' | 'session'
  /** The person's reason or instruction. */
  message?: string
}
/** One input's value: choice → string (multi → string[]), number, toggle → boolean, … */
export type AnswerValue = string | string[] | number | boolean | ApprovalAnswer | null
/** One input → its value; several → an object keyed by block id. */
export type Answer = AnswerValue | { [blockId: string]: unknown } | unknown

/** The value an input block answers with. */
export type ValueOf<B> = B extends { type: 'choice'; multi: true }
  ? string[]
  : B extends { type: 'choice' | 'text_input' }
    ? string
    : B extends { type: 'number_input' }
      ? number
      : B extends { type: 'toggle' }
        ? boolean
        : B extends { type: 'confirm' }
          ? true
          : B extends { type: 'approval' }
            ? ApprovalAnswer
            : unknown

type Inputs<Bs extends readonly unknown[]> = Bs extends readonly [infer H, ...infer R]
  ? H extends { type: InputBlock['type'] } | { type: 'html'; question: true }
    ? [H, ...Inputs<R>]
    : Inputs<R>
  : []

/**
 * The answer a list of blocks gets, when they are known at compile time (`as const`, or the
 * literal passed to `ask`): one input → its value, several → `{ [id]: value }`.
 */
export type AnswerOf<Bs extends readonly unknown[]> = number extends Bs['length']
  ? Answer
  : Inputs<Bs> extends [infer Only]
    ? ValueOf<Only>
    : Inputs<Bs> extends []
      ? Answer
      : {
          [I in Inputs<Bs>[number] as I extends { id: infer K extends string }
            ? K
            : never]: ValueOf<I>
        }

// Records.
export type AskStatus = 'open' | 'answered' | 'expired' | 'cancelled'
export type AckState = 'seen' | 'working' | 'done'

export interface MessageBody<Bs extends readonly Block[] = readonly Block[]> {
  title?: string
  text?: string
  blocks?: Bs
}

export interface AskInfo {
  status: AskStatus
  expires_at?: number
  answered_at?: number
  answer?: unknown
  /** Approvals: SHA-256 (hex) of the canonical JSON of `{ tool, input }`. */
  request_hash?: string
  /** Why a cancelled question was withdrawn. */
  reason?: string
  /** The passkey's assertion over a signed answer. */
  proof?: Record<string, unknown>
}

export interface Message {
  id: string
  channel_id: string
  sender: 'agent' | 'human'
  /** Milliseconds since the epoch. */
  created_at: number
  updated_at: number
  body: MessageBody
  silent?: boolean
  /** Present on questions. */
  ask?: AskInfo
  /** On the person's messages: the agent's acknowledgment. */
  state?: AckState | null
  /** The pin key, on pinned messages. */
  pin?: string
}

/** How the change feed shows a deleted message. */
export interface DeletedMessage {
  id: string
  deleted: true
}

export interface FeedPage {
  messages: (Message | DeletedMessage)[]
  /** Pass as `since` next time. */
  cursor: number
  has_more: boolean
}

export interface Pin {
  key: string
  message: Message
}

export interface FileInfo {
  file_id: string
  name: string
  mime: string
  size: number
  created_at: number
}

export interface Channel {
  id: string
  label: string
  created_at: number
  updated_at: number
  open_asks: number
  pins: number
  push_devices: number
  [field: string]: unknown
}

/** `block_patches`: `[{ id, ...fields }]` or `{ [id]: { ...fields } }`, merged by block id. */
export type BlockPatches =
  | ({ id: string } & Record<string, unknown>)[]
  | Record<string, Record<string, unknown>>

export interface EditRequest {
  /** `null` removes it. */
  title?: string | null
  text?: string | null
  blocks?: readonly Block[]
  block_patches?: BlockPatches
}

/** What `waitForAnswer` ends with. */
export interface AskResult<A = Answer> {
  /** `timeout`: still open when the wait ended (the question stays open). */
  status: 'answered' | 'expired' | 'cancelled' | 'timeout'
  /** The answer; on expiry the inputs' defaults (null for an approval); null otherwise. */
  answer: A | null
  message: Message
}

/** What anyone may read of a server (`GET /v1/info`, no token needed). */
export interface ServerInfo {
  name: string
  version: string
  /** The server's public URL: the app's links are under it. */
  base_url: string
  needs_setup: boolean
  registration: 'closed' | 'invite' | 'open'
  features: { files: boolean; push: boolean; passkeys: boolean; email: boolean }
  vapid_public_key: string
}

/**
 * The first answer of the device flow that connects an agent without a token
 * (`POST /v1/pair/start`, what `hark init` shows): the code the person approves in the app.
 */
export interface PairingStart {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}
