import type { ChannelRow } from '../channels/store.ts'
import { inputBlocks, optionValue } from '../messages/blocks.ts'
import type { Block, MessageBody } from '../messages/schema.ts'
import type { MessageRow } from '../messages/store.ts'
import { approvalLine, toolName } from '../shared/approval-text.ts'

/**
 * A button on the notification: `answer` answers the question without opening the app (with
 * the push's capability); `url` opens the app there instead, for an answer that must be signed
 * by a passkey, which a service worker cannot do (PRODUCT.md "Trusted answers").
 */
export interface PushAction {
  action: string
  title: string
  answer?: unknown
  url?: string
}

/**
 * What the service worker receives (decrypted). Push services cap a payload at 4 KB, so the
 * text is a preview and labels are cut; the app shows the whole message when opened.
 */
export interface PushPayload {
  kind: 'message' | 'test'
  channel_id: string | null
  channel_label: string | null
  message_id: string | null
  title: string | null
  text: string
  /** Where a tap on the notification leads (same origin). */
  url: string
  /** Only for a question with one simple input, or an approval (Allow / Deny). */
  actions?: PushAction[]
  /** An approval the agent marked destructive: the worker makes it stand out and stay. */
  danger?: boolean
  /** Added when sent, never stored in plain: the single-use key that `actions` answer with. */
  capability?: string
}

/** Comfortably below the 4 KB a push service accepts after encryption overhead. */
export const MAX_PAYLOAD_BYTES = 3000

const cut = (s: string, n: number) => {
  const flat = s.replace(/\s+/g, ' ').trim()
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat
}

/**
 * The one-tap answers of a question, if it has exactly one simple input: a confirm, or a
 * single choice of at most two options (the most buttons every platform shows). `url` is the
 * message in the app; `signed`: its answer takes a passkey's proof (`ask.request_hash`).
 */
export function quickActions(
  body: MessageBody,
  { url, signed }: { url: string; signed: boolean },
): PushAction[] | undefined {
  const inputs = inputBlocks(body)
  if (inputs.length !== 1) return undefined
  const input = inputs[0] as Block
  // Allow once or deny, never "allow for the session": a lock screen is no place to grant more
  // than the one action the person can read there. Allow is signed in the app, which the
  // button opens (`?act=allow` starts the passkey prompt there); a deny needs no signature
  // (it never lets an agent act), so it is answered from here.
  if (input.type === 'approval') {
    const [path, hash = ''] = url.split('#')
    return [
      { action: 'allow', title: 'Allow…', url: `${path}?act=allow${hash ? `#${hash}` : ''}` },
      { action: 'deny', title: 'Deny', answer: { decision: 'deny' } },
    ]
  }
  // Any other answer the agent checks a signature on is made in the app: a tap opens it.
  if (signed) return undefined
  if (input.type === 'confirm') {
    return [{ action: 'a0', title: cut(String(input.label ?? 'Confirm'), 40), answer: true }]
  }
  if (input.type !== 'choice' || input.multi === true) return undefined
  const options = (input.options ?? []) as { label: string; value?: string }[]
  if (options.length < 1 || options.length > 2) return undefined
  return options.map((o, i) => ({
    action: `a${i}`,
    title: cut(o.label, 40),
    answer: optionValue(o),
  }))
}

/** A line for a message without text: what its first block is about. */
function describe(body: MessageBody): string {
  const first = body.blocks?.[0] as Block | undefined
  const label = first && typeof first.label === 'string' ? first.label : undefined
  if (inputBlocks(body).length > 0) return label ? `Question: ${label}` : 'A question is waiting'
  return label ?? 'New message'
}

/**
 * An approval reads as what will happen: its `summary`, else a line from the tool and its main
 * input field (the command, the file, the URL); the title asks the question.
 */
function approvalText(body: MessageBody, approval: Block): { title: string; text: string } {
  const tool = String(approval.tool)
  const summary = typeof approval.summary === 'string' ? approval.summary.trim() : ''
  return {
    title: body.title || `Approve ${toolName(tool)}?`,
    text: summary || approvalLine(tool, approval.input),
  }
}

export function messagePayload(
  channel: ChannelRow,
  row: Pick<MessageRow, 'id' | 'body' | 'ask_status' | 'ask_request_hash'>,
): PushPayload {
  const body = JSON.parse(row.body as string) as MessageBody
  const approval = body.blocks?.find((b) => b.type === 'approval')
  const { title, text } = approval
    ? approvalText(body, approval)
    : { title: body.title, text: body.text ?? describe(body) }
  const url = `/c/${encodeURIComponent(channel.id)}#${encodeURIComponent(row.id)}`
  const payload: PushPayload = {
    kind: 'message',
    channel_id: channel.id,
    channel_label: cut(channel.label, 100),
    message_id: row.id,
    title: title ? cut(title, 120) : null,
    text: cut(text, 300),
    url,
  }
  const actions =
    row.ask_status === 'open'
      ? quickActions(body, { url, signed: row.ask_request_hash !== null })
      : undefined
  if (actions) payload.actions = actions
  if (approval?.danger === true) payload.danger = true
  return payload
}

/**
 * Where a tapped test notification opens the app: the page the test was sent from, told by
 * `?notification=test` that the round trip (sent, delivered, shown, tapped) is complete.
 */
export const TEST_OPENS = {
  settings: '/settings?notification=test#notifications',
  setup: '/setup?notification=test',
} as const

export const testPayload = (opens: keyof typeof TEST_OPENS = 'settings'): PushPayload => ({
  kind: 'test',
  channel_id: null,
  channel_label: 'Hark',
  message_id: null,
  title: 'Test notification',
  text: 'Notifications reach this device. Tap to finish the test.',
  url: TEST_OPENS[opens],
})
