import { toolName } from '../../../src/shared/approval-text.ts'
import { OpenAsks } from '../components/open-asks.tsx'
import { Spinner } from '../components/ui.tsx'
import { useAttention } from '../lib/attention.ts'
import { useChannels } from '../lib/channels.ts'
import { fromNow } from '../lib/format.ts'
import type { ChannelSummary, Message } from '../lib/types.ts'

/** The person's agents, most recent first: name, last message, unread and open questions. */

function preview(m: Message | null): string {
  if (!m) return 'No messages yet'
  const b = m.body
  const first =
    b.title ||
    b.text ||
    b.blocks?.map((x) => (x as { text?: unknown }).text).find((t) => typeof t === 'string')
  const approval = b.blocks?.find((x) => x.type === 'approval')
  const what =
    typeof first === 'string' && first
      ? first
      : approval
        ? `Approve ${toolName(String(approval.tool))}?`
        : m.ask
          ? 'Question'
          : 'Message'
  return m.sender === 'human' ? `You: ${what}` : what
}

const lastActivity = (c: ChannelSummary) => c.last_message?.created_at ?? c.created_at

export function ChannelList({ activeId }: { activeId?: string }) {
  const channels = useChannels()
  useAttention(channels)
  if (!channels) return <Spinner label="Loading your agents" />
  if (channels.length === 0) {
    return (
      <div class="empty">
        <p>No agents yet.</p>
        <a class="btn primary" href="/settings#connect">
          Connect an agent
        </a>
      </div>
    )
  }
  const sorted = [...channels].sort((a, b) => lastActivity(b) - lastActivity(a))
  return (
    <>
      <OpenAsks channels={channels} />
      <ul class="channel-list">
        {sorted.map((c) => (
          <li key={c.id}>
            <a
              href={`/c/${encodeURIComponent(c.id)}`}
              class={`channel${c.unread > 0 ? ' unread' : ''}`}
              aria-current={c.id === activeId ? 'page' : undefined}
            >
              <span class="channel-top">
                <span class="channel-label">{c.label}</span>
                <time class="channel-time">{fromNow(lastActivity(c))}</time>
              </span>
              <span class="channel-bottom">
                <span class="channel-preview">{preview(c.last_message)}</span>
                {c.open_asks > 0 && (
                  <span class="badge ask" title="Open questions">
                    {c.open_asks === 1 ? 'Question' : `${c.open_asks} questions`}
                  </span>
                )}
                {c.unread > 0 && (
                  <span class="badge count">
                    {c.unread > 99 ? '99+' : c.unread}
                    <span class="visually-hidden"> unread</span>
                  </span>
                )}
              </span>
            </a>
          </li>
        ))}
      </ul>
    </>
  )
}
