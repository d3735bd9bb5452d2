import { useEffect, useRef, useState } from 'preact/hooks'
import { toolName } from '../../../src/shared/approval-text.ts'
import type { ApprovalAnswer } from '../../../src/shared/blocks.ts'
import { deviceLabel } from '../../../src/shared/device.ts'
import { Plain } from '../components/approval/plain.tsx'
import { Button, ErrorNote, Spinner } from '../components/ui.tsx'
import { errorText } from '../lib/api.ts'
import { useChannels } from '../lib/channels.ts'
import * as client from '../lib/client.ts'
import { fromNow, fullDate } from '../lib/format.ts'
import { useMyPasskeys } from '../lib/signing.ts'
import type { ApprovalRecord, Passkey } from '../lib/types.ts'

/**
 * A channel's approval history (`/c/CHANNEL/approvals`): every decision on its approvals and
 * on its questions asked with proof, newest first, from the server's audit log. Each says what
 * was decided about which action, when, and by whom: signed by which passkey, unsigned from
 * which browser or token or notification, withdrawn by the agent (and why), or expired.
 */

/** Decisions read per page; "Show older" reads the next. */
const PAGE = 30

export function ApprovalHistory({ id }: { id: string }) {
  const channels = useChannels()
  const channel = channels?.find((c) => c.id === id)
  const passkeys = useMyPasskeys()
  const [items, setItems] = useState<ApprovalRecord[] | null>(null)
  const [more, setMore] = useState(false)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<string | null>(null)
  /** Numbers each read, so a page for an earlier channel never lands in this one. */
  const reads = useRef(0)

  const load = async (before?: number) => {
    const read = ++reads.current
    setLoading(true)
    setError(null)
    try {
      const page = await client.approvalHistory(id, before, PAGE)
      if (read !== reads.current) return
      setItems((shown) => (before && shown ? [...shown, ...page] : page))
      setMore(page.length === PAGE)
    } catch (e) {
      if (read === reads.current) setError(errorText(e))
    } finally {
      if (read === reads.current) setLoading(false)
    }
  }

  useEffect(() => {
    void load()
  }, [id])

  const thread = `/c/${encodeURIComponent(id)}`
  return (
    <section class="history" aria-labelledby="history-head">
      <header class="thread-head">
        <a class="back always" href={thread} aria-label="Back to the messages">
          ‹
        </a>
        <h2 id="history-head">Approvals{channel ? ` · ${channel.label}` : ''}</h2>
      </header>
      <div class="history-body">
        <ErrorNote error={error} />
        {items === null ? (
          !error && <Spinner label="Loading approvals" />
        ) : items.length === 0 ? (
          <p class="empty">No approvals yet. What you allow or deny here is listed.</p>
        ) : (
          <ol class="history-list">
            {items.map((r) => (
              <HistoryItem key={r.seq} record={r} passkeys={passkeys} thread={thread} />
            ))}
          </ol>
        )}
        {more && (
          <Button
            variant="quiet"
            class="older"
            busy={loading}
            onClick={() => void load(lastSeq(items))}
          >
            Show older
          </Button>
        )}
      </div>
    </section>
  )
}

const lastSeq = (items: ApprovalRecord[] | null) => items?.at(-1)?.seq

/** The decision in words, and its kind (the colour it is shown in). */
export function decisionOf(r: ApprovalRecord): { text: string; kind: string; message?: string } {
  if (r.status === 'expired') return { text: 'Expired — not allowed', kind: 'expired' }
  if (r.status === 'cancelled') return { text: 'Withdrawn', kind: 'withdrawn' }
  if (r.status === 'deleted') {
    // An answered one keeps its own line below this one: only the message went.
    const text = r.was === 'open' ? 'Withdrawn — the agent deleted it' : 'Deleted by the agent'
    return { text, kind: 'withdrawn' }
  }
  const answer = r.answer as Partial<ApprovalAnswer> | null | undefined
  if (r.tool !== undefined && answer && typeof answer === 'object') {
    if (answer.decision === 'allow') {
      const text = answer.scope === 'session' ? 'Allowed for this session' : 'Allowed'
      return { text, kind: 'allowed' }
    }
    return { text: 'Denied', kind: 'denied', message: answer.message || undefined }
  }
  // A question asked with proof: its answer, short.
  const shown = typeof r.answer === 'string' ? r.answer : JSON.stringify(r.answer ?? null)
  return {
    text: `Answered: ${shown.length > 80 ? `${shown.slice(0, 79)}…` : shown}`,
    kind: 'answered',
  }
}

/** Who settled it, and how: the passkey's name, or what answered it unsigned. */
export function byOf(r: ApprovalRecord, passkeys: Passkey[] | undefined): string {
  const browser = deviceLabel(r.device)
  switch (r.by) {
    case 'passkey': {
      const key = passkeys?.find((p) => p.id === r.credential_id)
      const name = key
        ? `passkey “${key.name}”`
        : passkeys
          ? 'a passkey since removed'
          : 'a passkey'
      const batch = r.proof?.batch?.items.length
      const together = batch && batch > 1 ? `, one signature for ${batch} approvals` : ''
      return `Signed with ${name}${browser ? ` in ${browser}` : ''}${together}`
    }
    case 'session':
      return `Unsigned, in ${browser ?? 'a browser'}`
    case 'person-token':
      return r.device ? `Unsigned, with the token “${r.device}”` : 'Unsigned, with a person token'
    case 'notification':
      return 'Unsigned, from a notification'
    case 'agent':
      return r.reason ? `By the agent: ${r.reason}` : 'By the agent'
    case 'server':
      return 'Nobody answered in time'
  }
}

function HistoryItem({
  record: r,
  passkeys,
  thread,
}: {
  record: ApprovalRecord
  passkeys: Passkey[] | undefined
  thread: string
}) {
  const decision = decisionOf(r)
  return (
    <li class={`history-item ${decision.kind}`}>
      <p class="history-top">
        <span class="history-decision">{decision.text}</span>
        <time dateTime={new Date(r.at).toISOString()} title={fullDate(r.at)}>
          {fromNow(r.at)}
        </time>
      </p>
      <p class="history-what">
        <span class="ap-tool">
          <Plain text={r.tool !== undefined ? toolName(r.tool) : 'Question'} />
        </span>
        {r.summary && (
          <code class="history-summary">
            <Plain text={r.summary} />
          </code>
        )}
      </p>
      {decision.message && (
        <blockquote class="history-message">
          <Plain text={decision.message} />
        </blockquote>
      )}
      <p class="history-bottom">
        <span class={`history-by by-${r.by}`}>
          <Plain text={byOf(r, passkeys)} />
        </span>
        <a class="history-link" href={`${thread}#${encodeURIComponent(r.message_id)}`}>
          Show in the thread
        </a>
      </p>
    </li>
  )
}
