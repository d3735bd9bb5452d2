import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { approvalLine, toolName } from '../../../../src/shared/approval-text.ts'
import type { ApprovalAnswer } from '../../../../src/shared/blocks.ts'
import { ApiError, errorText } from '../../lib/api.ts'
import * as client from '../../lib/client.ts'
import { fromNow } from '../../lib/format.ts'
import type { Block, Message } from '../../lib/types.ts'
import { DisplayBlock } from '../blocks.tsx'
import { Button, ErrorNote } from '../ui.tsx'
import { anyHidden, Plain } from './plain.tsx'
import { ToolView } from './tool-view.tsx'

/**
 * An approval question (PRODUCT.md "Approvals"): an agent asks to be allowed one tool call.
 * The card shows what will happen (tool-view.tsx), then Allow, Allow for this session (only
 * when the agent offered it), or Deny with an optional message that goes back to the agent.
 * Once closed it says how: allowed, denied, expired (never allowed), or withdrawn.
 */

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** The approval block of a message, if it is an approval question. */
export const approvalOf = (message: Message): Block | undefined =>
  message.ask ? message.body.blocks?.find((b) => b.type === 'approval') : undefined

export function ApprovalQuestion({
  message,
  approval,
  onAnswered,
}: {
  message: Message
  approval: Block
  onAnswered: (m: Message) => void
}) {
  const blocks = message.body.blocks ?? []
  return (
    <div class="question">
      {blocks.map((b, i) =>
        b === approval ? (
          <ApprovalCard key={b.id ?? i} message={message} block={b} onAnswered={onAnswered} />
        ) : (
          <DisplayBlock key={b.id ?? `#${i}`} block={b} channelId={message.channel_id} />
        ),
      )}
    </div>
  )
}

function ApprovalCard({
  message,
  block,
  onAnswered,
}: {
  message: Message
  block: Block
  onAnswered: (m: Message) => void
}) {
  const tool = str(block.tool)
  const danger = block.danger === true
  const summary = str(block.summary).trim()
  const cwd = str(block.cwd)
  const open = message.ask?.status === 'open'
  const hidden = anyHidden([tool, summary, cwd, block.input])
  return (
    <section class={`approval${danger ? ' danger' : ''}`} aria-label={`Approval: ${tool}`}>
      <p class="ap-head">
        <span class="ap-tool">
          <Plain text={toolName(tool)} />
        </span>
        {danger && <span class="ap-danger">⚠ Destructive</span>}
      </p>
      {hidden && (
        <p class="ap-warning" role="note">
          ⚠ This request holds invisible characters, shown in red: read it closely.
        </p>
      )}
      {summary && summary !== approvalLine(tool, block.input) && (
        <p class="ap-summary">
          <Plain text={summary} />
        </p>
      )}
      <ToolView tool={tool} input={block.input} />
      {cwd && (
        <p class="ap-cwd">
          <span>in</span>{' '}
          <code>
            <Plain text={cwd} />
          </code>
        </p>
      )}
      {open ? (
        // Hidden characters call for the same care as a destructive action.
        <Decide message={message} block={block} danger={danger || hidden} onAnswered={onAnswered} />
      ) : (
        <ApprovalOutcome message={message} />
      )}
    </section>
  )
}

function Decide({
  message,
  block,
  danger,
  onAnswered,
}: {
  message: Message
  block: Block
  danger: boolean
  onAnswered: (m: Message) => void
}) {
  const scopes = Array.isArray(block.scopes) ? (block.scopes as unknown[]) : ['once']
  const [denying, setDenying] = useState(false)
  const [reason, setReason] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const sending = useRef(false)
  const reasonField = useRef<HTMLTextAreaElement>(null)
  const denyButton = useRef<HTMLButtonElement>(null)
  const wasDenying = useRef(false)

  // Focus follows the step: into the message field when it opens, back to Deny when it closes.
  useLayoutEffect(() => {
    if (denying) reasonField.current?.focus()
    else if (wasDenying.current) denyButton.current?.focus()
    wasDenying.current = denying
  }, [denying])

  const send = async (answer: ApprovalAnswer) => {
    if (sending.current) return // one answer, however fast the taps
    sending.current = true
    setBusy(true)
    setError(null)
    try {
      onAnswered(await client.answer(message.id, answer))
    } catch (e) {
      sending.current = false
      setError(
        e instanceof ApiError && e.status === 409
          ? 'This approval is closed: it was answered, withdrawn or it expired.'
          : errorText(e),
      )
    } finally {
      setBusy(false)
    }
  }

  const deny = (event: Event) => {
    event.preventDefault()
    const text = reason.trim()
    void send(text ? { decision: 'deny', message: text } : { decision: 'deny' })
  }

  return (
    <div class="ap-decide" aria-busy={busy || undefined}>
      {denying ? (
        <form class="ap-deny" onSubmit={deny}>
          <label class="field">
            <span class="field-label">Message to the agent (optional)</span>
            <textarea
              ref={reasonField}
              rows={2}
              maxLength={800}
              placeholder="Why not, or what to do instead"
              value={reason}
              onInput={(e) => setReason(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === 'Escape') setDenying(false)
                // Ctrl/⌘+Enter sends, as in the composer; Enter alone makes a new line.
                if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) deny(e)
              }}
            />
          </label>
          <div class="ap-buttons">
            <Button type="submit" variant="danger" busy={busy}>
              Deny
            </Button>
            <Button variant="quiet" disabled={busy} onClick={() => setDenying(false)}>
              Back
            </Button>
          </div>
        </form>
      ) : (
        <div class="ap-buttons">
          <Button
            variant={danger ? 'danger' : 'primary'}
            class="ap-allow"
            busy={busy}
            onClick={() => void send({ decision: 'allow' })}
          >
            Allow
          </Button>
          {scopes.includes('session') && (
            <Button busy={busy} onClick={() => void send({ decision: 'allow', scope: 'session' })}>
              Allow for this session
            </Button>
          )}
          <Button
            ref={denyButton}
            class="ap-deny-start"
            busy={busy}
            onClick={() => setDenying(true)}
          >
            Deny
          </Button>
        </div>
      )}
      <ErrorNote error={error} />
      {message.ask?.expires_at && (
        <p class="q-expiry">
          Expires {fromNow(message.ask.expires_at)}; no answer means not allowed.
        </p>
      )}
    </div>
  )
}

/** How a closed approval ended, in the words the person reads in the thread. */
export function outcomeText(
  message: Message,
): { text: string; kind: string; message?: string } | undefined {
  const ask = message.ask
  if (!ask || ask.status === 'open') return undefined
  if (ask.status === 'expired') return { text: 'Expired — not allowed', kind: 'expired' }
  if (ask.status === 'cancelled') {
    return {
      text: ask.reason ? `Withdrawn: ${ask.reason}` : 'Withdrawn by the agent',
      kind: 'withdrawn',
    }
  }
  const answer = (ask.answer ?? {}) as Partial<ApprovalAnswer>
  if (answer.decision === 'allow') {
    return {
      text: answer.scope === 'session' ? 'Allowed for this session' : 'Allowed',
      kind: 'allowed',
    }
  }
  return { text: 'Denied', kind: 'denied', message: answer.message || undefined }
}

function ApprovalOutcome({ message }: { message: Message }) {
  const outcome = outcomeText(message)
  if (!outcome) return null
  const at = message.ask?.status === 'answered' ? message.ask.answered_at : undefined
  return (
    <p class={`ap-outcome ${outcome.kind}`}>
      <span class="ap-outcome-text">
        {outcome.text}
        {outcome.message && ':'}
      </span>
      {outcome.message && <span class="ap-outcome-message"> {outcome.message}</span>}
      {at && <span class="ap-outcome-when"> · {fromNow(at)}</span>}
    </p>
  )
}
