import { useState } from 'preact/hooks'
import { approvalLine, toolName } from '../../../src/shared/approval-text.ts'
import { ApiError } from '../lib/api.ts'
import { useOpenAsks } from '../lib/asks.ts'
import { allowTogether, batchable, similarKey } from '../lib/batch.ts'
import { fromNow } from '../lib/format.ts'
import { NotSigned, useMyPasskeys } from '../lib/signing.ts'
import type { ChannelSummary, Message } from '../lib/types.ts'
import { approvalOf } from './approval/index.tsx'
import { Button, ErrorNote } from './ui.tsx'

/**
 * "Waiting on you": every open approval and question across the person's agents, oldest first
 * (the one waiting longest is the one most likely blocking an agent), on top of the channel
 * list. Each opens its message in its thread (`/c/CHANNEL#MESSAGE`, the link a push opens too).
 * When two or more approvals could be allowed together (not destructive, signed answers), each
 * gets a checkbox, similar ones (the same tool) can be selected at once, and "Allow N" signs
 * them all with one passkey gesture (lib/batch.ts). Hidden when nothing waits.
 */
export function OpenAsks({ channels }: { channels: ChannelSummary[] }) {
  const asks = useOpenAsks()
  const passkeys = useMyPasskeys()
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set())
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [done, setDone] = useState<string | null>(null)
  if (!asks || asks.length === 0) return null
  const labels = new Map(channels.map((c) => [c.id, c.label]))
  const candidates = asks.filter(batchable)
  // Only with a passkey to sign with, and only when there is more than one to pick.
  const selectable = (passkeys?.length ?? 0) > 0 && candidates.length >= 2
  // What was picked and is still waiting (an answer elsewhere takes it off).
  const chosen = candidates.filter((m) => picked.has(m.id))
  const groups = new Map<string, Message[]>()
  for (const m of candidates) groups.set(similarKey(m), [...(groups.get(similarKey(m)) ?? []), m])
  const similar = [...groups].filter(([, list]) => list.length >= 2)
  const toggle = (ids: string[], on: boolean) => {
    setDone(null)
    setError(null)
    const next = new Set(picked)
    for (const id of ids) {
      if (on) next.add(id)
      else next.delete(id)
    }
    setPicked(next)
  }
  const allow = async () => {
    setBusy(true)
    setError(null)
    setDone(null)
    try {
      const answered = await allowTogether(chosen)
      setPicked(new Set())
      setDone(`Allowed ${answered.length}, signed with one passkey.`)
    } catch (e) {
      setError(batchError(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <section class="open-asks" aria-labelledby="open-asks-head">
      <h2 id="open-asks-head">
        Waiting on you <span class="badge ask">{asks.length}</span>
      </h2>
      {selectable && (
        <fieldset class="batch-pick">
          <legend class="visually-hidden">Select similar approvals</legend>
          {similar.map(([tool, list]) => {
            const all = list.every((m) => picked.has(m.id))
            return (
              <Button
                key={tool}
                class={`batch-similar${all ? ' pressed' : ''}`}
                aria-pressed={all}
                onClick={() =>
                  toggle(
                    list.map((m) => m.id),
                    !all,
                  )
                }
              >
                All {tool} ({list.length})
              </Button>
            )
          })}
        </fieldset>
      )}
      <ul>
        {asks.map((m) => {
          const channel = labels.get(m.channel_id) ?? 'Agent'
          const canPick = selectable && batchable(m)
          return (
            <li key={m.id} class={selectable ? 'open-ask-row' : undefined}>
              {selectable &&
                (canPick ? (
                  // The whole column is the checkbox's label: a thumb-sized target.
                  <label class="open-ask-pick">
                    <input
                      type="checkbox"
                      checked={picked.has(m.id)}
                      aria-label={`Select: ${askTitle(m)} (${channel})`}
                      onChange={(e) => toggle([m.id], (e.target as HTMLInputElement).checked)}
                    />
                  </label>
                ) : (
                  <span class="open-ask-pick" />
                ))}
              <OpenAsk message={m} channel={channel} />
            </li>
          )
        })}
      </ul>
      {((selectable && chosen.length > 0) || done || error) && (
        <div class="batch-bar">
          {selectable && chosen.length > 0 && (
            <>
              <Button
                variant="primary"
                busy={busy}
                disabled={chosen.length < 2}
                onClick={() => void allow()}
              >
                Allow {chosen.length}
              </Button>
              <Button
                variant="quiet"
                disabled={busy}
                onClick={() =>
                  toggle(
                    chosen.map((m) => m.id),
                    false,
                  )
                }
              >
                Clear
              </Button>
              <span class="batch-note muted">
                {chosen.length < 2
                  ? 'Select another to allow them together.'
                  : 'One passkey prompt signs them all.'}
              </span>
            </>
          )}
          {done && (
            <p class="batch-done" role="status">
              {done}
            </p>
          )}
          <ErrorNote error={error} />
        </div>
      )}
    </section>
  )
}

/** Why nothing was allowed, in the person's words: the batch is all or nothing. */
function batchError(e: unknown): string {
  if (e instanceof NotSigned) return `Nothing was sent. ${e.message} Tap Allow to try again.`
  if (e instanceof ApiError && (e.status === 409 || e.status === 404)) {
    return 'Nothing was allowed: one of them was answered or withdrawn meanwhile. Select again.'
  }
  return `Nothing was allowed: ${(e as Error).message}`
}

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** A question's line: its title, its text, or its first input's label. */
function questionLine(m: Message): string {
  const label = m.body.blocks?.map((b) => str(b.label)).find(Boolean)
  return m.body.title || m.body.text || label || 'A question'
}

/** The line a waiting item is known by: an approval's title, or a question's line. */
function askTitle(m: Message): string {
  const approval = approvalOf(m)
  if (!approval) return questionLine(m)
  return m.body.title || `Approve ${toolName(str(approval.tool))}?`
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
      <span class="open-ask-title">{askTitle(message)}</span>
      {what && <code class="open-ask-what">{what}</code>}
    </a>
  )
}
