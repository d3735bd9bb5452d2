import { approvalLine, toolName } from '../../../src/shared/approval-text.ts'
import { useOpenAsks } from '../lib/asks.ts'
import { fromNow } from '../lib/format.ts'
import type { ChannelSummary, Message } from '../lib/types.ts'
import { approvalOf } from './approval/index.tsx'

/**
 * "Waiting on you": every open approval and question across the person's agents, oldest first
 * (the one waiting longest is the one most likely blocking an agent), on top of the channel
 * list. Each opens its message in its thread (`/c/CHANNEL#MESSAGE`, the link a push opens too).
 * Hidden when nothing waits.
 */
export function OpenAsks({ channels }: { channels: ChannelSummary[] }) {
  const asks = useOpenAsks()
  if (!asks || asks.length === 0) return null
  const labels = new Map(channels.map((c) => [c.id, c.label]))
  return (
    <section class="open-asks" aria-labelledby="open-asks-head">
      <h2 id="open-asks-head">
        Waiting on you <span class="badge ask">{asks.length}</span>
      </h2>
      <ul>
        {asks.map((m) => (
          <li key={m.id}>
            <OpenAsk message={m} channel={labels.get(m.channel_id) ?? 'Agent'} />
          </li>
        ))}
      </ul>
    </section>
  )
}

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** A question's line: its title, its text, or its first input's label. */
function questionLine(m: Message): string {
  const label = m.body.blocks?.map((b) => str(b.label)).find(Boolean)
  return m.body.title || m.body.text || label || 'A question'
}

function OpenAsk({ message, channel }: { message: Message; channel: string }) {
  const approval = approvalOf(message)
  const danger = approval?.danger === true
  const href = `/c/${encodeURIComponent(message.channel_id)}#${encodeURIComponent(message.id)}`
  const what = approval
    ? str(approval.summary).trim() || approvalLine(str(approval.tool), approval.input)
    : undefined
  return (
    <a href={href} class={`open-ask${danger ? ' danger' : ''}`}>
      <span class="open-ask-top">
        <span class="open-ask-kind">
          {approval ? (danger ? '⚠ Approval' : 'Approval') : 'Question'}
        </span>
        <span class="open-ask-channel">{channel}</span>
        <time class="channel-time" dateTime={new Date(message.created_at).toISOString()}>
          {fromNow(message.created_at)}
        </time>
      </span>
      <span class="open-ask-title">
        {approval
          ? message.body.title || `Approve ${toolName(str(approval.tool))}?`
          : questionLine(message)}
      </span>
      {what && <code class="open-ask-what">{what}</code>}
    </a>
  )
}
