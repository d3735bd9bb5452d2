import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { type PendingApprovals, pendingApprovals } from '../../agent/harnesses/pending.ts'
import { Inbox } from '../../agent/inbox.ts'
import type { Env } from '../../agent/profiles.ts'
import type { Session } from '../../agent/session.ts'
import { askLedger } from '../../agent/trust.ts'
import type { Message } from '../../messages/schema.ts'
import { allowsUnsigned, DEFAULT_HOOK_WAIT_S, signatureCheck } from '../harness/hook.ts'
import {
  CHANNEL_EVENT,
  PERMISSION_REQUEST,
  parsePermissionRequest,
  relayPermission,
  withdrawOpen,
} from './relay.ts'

/**
 * `hark mcp --channel`: the MCP server is also a Claude Code channel (a research preview). It
 * declares `claude/channel` (the person's messages pushed into the running session) and
 * `claude/channel/permission` (the session's permission prompts relayed as approval cards).
 * Claude Code registers it only past its gates (docs/decisions.md "Claude Code channels"): the
 * server does not learn whether it did, so nothing here depends on it.
 */
export const CHANNEL_CAPABILITIES = {
  experimental: { 'claude/channel': {}, 'claude/channel/permission': {} },
}

export const CHANNEL_INSTRUCTIONS = `
Messages the person writes to you in Hark arrive as <channel source="hark"> events, with who
sent them and when (meta: message_id, sent_at, files). Act on them as on a user message; say where
you are with acknowledge(message_id, "working" | "done"). read_messages shows the same messages
again. A file the person attached is named by its id: fetch it with "hark download FILE_ID".`

/** How long a relayed prompt stays on the phone (the terminal's dialog waits as long). */
const channelWaitMs = (env: Env) => {
  const n = Number(env.HARK_CHANNEL_WAIT)
  return (env.HARK_CHANNEL_WAIT && Number.isFinite(n) && n > 0 ? n : DEFAULT_HOOK_WAIT_S) * 1000
}

/** How long a relayed prompt waits for the hook's card (`HARK_CHANNEL_HOOKS=1`) before its own. */
const HOOK_CARD_WAIT_MS = 3000

/**
 * With Hark's hooks installed too (`hark install claude --channel` says so with
 * HARK_CHANNEL_HOOKS=1), Claude Code runs the PermissionRequest hook and relays the same prompt
 * here: the hook's card (tracked for the session in the pending store, under a key that is not
 * the channel's) is the one card. The hook stays the one that also works in \`claude -p\` and when
 * Claude Code skips the channel.
 */
function hookAsked(pending: PendingApprovals, ours: Set<string>): () => Promise<boolean> {
  return async () => {
    const deadline = Date.now() + HOOK_CARD_WAIT_MS
    for (;;) {
      if (pending.list().some((id) => !ours.has(id))) return true
      if (Date.now() > deadline) return false
      await Bun.sleep(50)
    }
  }
}

/** A message of the person as the session reads it: the text, and what is attached. */
export function channelEvent(m: Message): { content: string; meta: Record<string, string> } {
  const files = (m.body.blocks ?? []).flatMap((b) =>
    (b.type === 'file' || b.type === 'image') && typeof b.file_id === 'string'
      ? [{ id: b.file_id, name: typeof b.name === 'string' ? b.name : b.file_id }]
      : [],
  )
  const lines = [m.body.title, m.body.text].filter((t): t is string => !!t?.trim())
  for (const f of files) lines.push(`Attached: "${f.name}" (${f.id}): hark download ${f.id}`)
  return {
    content: lines.join('\n') || '(an empty message)',
    meta: {
      from: 'person',
      message_id: m.id,
      sent_at: new Date(m.created_at).toISOString(),
      ...(files.length > 0 ? { files: files.map((f) => f.id).join(',') } : {}),
    },
  }
}

/**
 * Wires the channel into `server` (constructed with CHANNEL_CAPABILITIES): relays permission
 * requests and, once the client is initialized, pushes the person's messages. Returns a stop
 * that ends the message loop and withdraws the cards still open.
 */
export function attachChannel(server: Server, session: Session, env: Env) {
  const warn = (line: string) => process.stderr.write(`hark channel: ${line}\n`)
  const client = session.client
  const sessionId = env.CLAUDE_CODE_SESSION_ID || 'no-session'
  const pending = pendingApprovals(env, sessionId)
  const ledger = askLedger(env, session.profile)
  // The cards this channel put up; any other open card of the session is a hook's.
  const ours = new Set<string>()
  const stop = new AbortController()
  const notify = (method: string, params: Record<string, unknown>) =>
    server.notification({ method, params } as Parameters<Server['notification']>[0])
  server.fallbackNotificationHandler = async (n) => {
    if (n.method !== PERMISSION_REQUEST) return
    const request = parsePermissionRequest(n.params)
    if (!request) {
      warn('a permission request without request_id or tool_name: ignored')
      return
    }
    // Not awaited: a prompt waits for the person while others come and go.
    relayPermission(request, {
      client,
      pending,
      waitMs: channelWaitMs(env),
      cwd: env.CLAUDE_PROJECT_DIR || undefined,
      session: env.CLAUDE_CODE_SESSION_ID || undefined,
      warn,
      onAsked: (m) => {
        ours.add(m.id)
        ledger.note(m.id)
      },
      ...(env.HARK_CHANNEL_HOOKS === '1' ? { hookAsked: hookAsked(pending, ours) } : {}),
      ...(allowsUnsigned(false, env) ? {} : { verifyAllow: signatureCheck(ledger) }),
      notify,
    }).catch((error) => warn(`relaying ${request.request_id} failed: ${String(error)}`))
  }
  const pushMessages = async () => {
    // Peeking: the stored place does not move, so a session where Claude Code skipped the
    // channel (its gates) still finds these messages with read_messages; nothing is lost.
    const inbox = new Inbox(session, env, { peek: true })
    while (!stop.signal.aborted) {
      let messages: Message[]
      try {
        messages = await inbox.read(25_000, warn)
      } catch (error) {
        warn(`reading messages failed: ${String(error)}`)
        await Bun.sleep(5000)
        continue
      }
      for (const m of messages) {
        if (stop.signal.aborted) return
        // Not acknowledged here: Claude Code drops the event without a word when it skipped the
        // channel, so a "seen" from this process could be false. The agent acknowledges.
        await notify(CHANNEL_EVENT, channelEvent(m))
      }
    }
  }
  const initialized = server.oninitialized
  server.oninitialized = () => {
    initialized?.()
    void pushMessages()
  }
  return async () => {
    stop.abort()
    await withdrawOpen(client, pending).catch(() => {})
  }
}
