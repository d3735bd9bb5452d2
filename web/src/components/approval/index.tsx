import { approvalLine, toolName } from '../../../../src/shared/approval-text.ts'
import type { ApprovalAnswer } from '../../../../src/shared/blocks.ts'
import { fromNow } from '../../lib/format.ts'
import { takesProof } from '../../lib/signing.ts'
import type { Block, Message } from '../../lib/types.ts'
import { DisplayBlock } from '../blocks.tsx'
import { NoPasskeyNote } from '../signing-notes.tsx'
import { Decide } from './decide.tsx'
import { anyHidden, Plain } from './plain.tsx'
import { ToolView } from './tool-view.tsx'

/**
 * An approval question (PRODUCT.md "Approvals"): an agent asks to be allowed one tool call.
 * The card shows what will happen (tool-view.tsx), then Allow, Allow for this session (only
 * when the agent offered it), or Deny with an optional message that goes back to the agent,
 * each signed by the person's passkey (decide.tsx). Once closed it says how: allowed, denied,
 * expired (never allowed), or withdrawn, and whether the answer was signed.
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
  const answered = message.ask?.status === 'answered'
  const at = answered ? message.ask?.answered_at : undefined
  // Whether an agent that checks signatures can act on it: only a signed answer counts.
  const signed = answered && takesProof(message) ? message.ask?.proof !== undefined : undefined
  return (
    <>
      <p class={`ap-outcome ${outcome.kind}`}>
        <span class="ap-outcome-text">
          {outcome.text}
          {outcome.message && ':'}
        </span>
        {outcome.message && <span class="ap-outcome-message"> {outcome.message}</span>}
        {signed !== undefined && (
          <span class={`ap-signed${signed ? '' : ' unsigned'}`}>
            {' · '}
            {signed ? 'signed with a passkey' : 'unsigned'}
          </span>
        )}
        {at && <span class="ap-outcome-when"> · {fromNow(at)}</span>}
      </p>
      {signed === false && outcome.kind === 'allowed' && <NoPasskeyNote answered />}
    </>
  )
}
