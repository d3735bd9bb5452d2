import { useEffect, useState } from 'preact/hooks'
import { commandOf } from '../../../../src/shared/approval-text.ts'
import {
  isDangerousCommand,
  matches,
  NEVER_GENERALIZED,
  type PolicyMatch,
  type PolicyRule,
  type PolicyWhere,
  proposedMatch,
  ruleText,
} from '../../../../src/shared/policy.ts'
import { approvalHistory } from '../../lib/client.ts'
import { addPolicy, type Lifetime } from '../../lib/policies.ts'
import type { Block, Message } from '../../lib/types.ts'
import { Button, ErrorNote, useAction } from '../ui.tsx'

/**
 * "Always allow…" / "Never allow…" on an approval card (docs/security.md "Approval policies"):
 * the rule the card proposes for this action, in words (tool; command prefix, path glob or
 * host; where; how long), which the person can narrow before signing it with their passkey.
 * A destructive command's rule is the exact command, and the card says why. Saving the rule
 * does not answer this card: the agent asked already, so the person still decides it.
 */
type Effect = PolicyRule['effect']

const LIFETIMES: { value: Lifetime; label: string }[] = [
  { value: 'hour', label: '1 hour' },
  { value: 'today', label: 'Today' },
  { value: 'week', label: '7 days' },
  { value: 'month', label: '30 days' },
]

export function RuleStarters({ onPick }: { onPick: (effect: Effect) => void }) {
  return (
    <div class="ap-rule-starters">
      <Button variant="quiet" onClick={() => onPick('allow')}>
        Always allow…
      </Button>
      <Button variant="quiet" onClick={() => onPick('deny')}>
        Never allow…
      </Button>
      <a class="ap-rules-link" href="/policies">
        Your rules
      </a>
    </div>
  )
}

export function RuleEditor({
  message,
  block,
  effect,
  onClose,
}: {
  message: Message
  block: Block
  effect: Effect
  onClose: () => void
}) {
  const tool = typeof block.tool === 'string' ? block.tool : ''
  const input = block.input
  const cwd = typeof block.cwd === 'string' ? block.cwd : ''
  const command = commandOf(tool, input)
  const destructive = command !== undefined && isDangerousCommand(command)
  // A destructive command's proposal is the exact command (src/shared/policy.ts).
  const proposal = proposedMatch(tool, input)
  const [pattern, setPattern] = useState(
    proposal.kind === 'prefix' || proposal.kind === 'exact'
      ? proposal.command
      : proposal.kind === 'path'
        ? proposal.glob
        : proposal.kind === 'host'
          ? proposal.host
          : '',
  )
  const [where, setWhere] = useState<'channel' | 'cwd' | 'all'>('channel')
  const [lifetime, setLifetime] = useState<Lifetime>('today')
  const [note, setNote] = useState('')
  const [saved, setSaved] = useState(false)

  const match: PolicyMatch =
    proposal.kind === 'prefix'
      ? { kind: 'prefix', command: pattern.trim() }
      : proposal.kind === 'path'
        ? { kind: 'path', glob: pattern.trim() }
        : proposal
  const place: PolicyWhere =
    where === 'all'
      ? { kind: 'all' }
      : where === 'cwd'
        ? { kind: 'cwd', channel_id: message.channel_id, cwd }
        : { kind: 'channel', channel_id: message.channel_id }
  const rule: PolicyRule = { effect, tool, match, where: place }
  if (effect === 'deny' && note.trim()) rule.message = note.trim()
  // Narrowing only: the rule must still cover the action it was made from, and a prefix can
  // only grow longer than the one proposed.
  const covers =
    matches(rule, { tool, input }) &&
    (proposal.kind !== 'prefix' || pattern.trim().startsWith(proposal.command))
  const [save, busy, error] = useAction(async () => {
    await addPolicy(rule, lifetime)
    setSaved(true)
  })

  if (saved) {
    return (
      <div class="ap-rule" role="status">
        <p>
          Saved and signed: {ruleText(rule)}. It applies from the next request; decide this one
          above. <a href="/policies">See your rules</a>
        </p>
        <Button variant="quiet" onClick={onClose}>
          Close
        </Button>
      </div>
    )
  }
  const title = effect === 'allow' ? 'Always allow' : 'Never allow'
  return (
    <form
      class="ap-rule stack"
      aria-label={title}
      onSubmit={(e) => {
        e.preventDefault()
        if (covers) void save()
      }}
    >
      <p class="ap-rule-words">
        <strong>{ruleText(rule)}</strong>
      </p>
      {proposal.kind === 'exact' && destructive && <p class="ap-rule-why">{NEVER_GENERALIZED}</p>}
      {(proposal.kind === 'prefix' || proposal.kind === 'path') && (
        <label class="field">
          <span class="field-label">
            {proposal.kind === 'prefix' ? 'Commands starting with' : 'Files matching'}
          </span>
          <input value={pattern} onInput={(e) => setPattern(e.currentTarget.value)} />
        </label>
      )}
      {!covers && (
        <p class="error-note" role="alert">
          The rule must still cover this request: it can be narrowed, not widened or moved.
        </p>
      )}
      <fieldset class="ap-rule-choice">
        <legend>Where</legend>
        <Choice name="where" value="channel" current={where} set={setWhere} label="This agent" />
        {cwd && (
          <Choice
            name="where"
            value="cwd"
            current={where}
            set={setWhere}
            label={`This directory (${cwd})`}
          />
        )}
        <Choice name="where" value="all" current={where} set={setWhere} label="All my agents" />
      </fieldset>
      <label class="field">
        <span class="field-label">For</span>
        <select value={lifetime} onChange={(e) => setLifetime(e.currentTarget.value as Lifetime)}>
          {LIFETIMES.map((l) => (
            <option key={l.value} value={l.value}>
              {l.label}
            </option>
          ))}
        </select>
      </label>
      {effect === 'deny' && (
        <label class="field">
          <span class="field-label">Message to the agent</span>
          <input
            value={note}
            maxLength={800}
            placeholder="What to do instead"
            onInput={(e) => setNote(e.currentTarget.value)}
          />
        </label>
      )}
      <div class="ap-buttons">
        <Button
          type="submit"
          variant={effect === 'allow' ? 'primary' : 'danger'}
          busy={busy}
          disabled={!covers}
        >
          Sign and save
        </Button>
        <Button variant="quiet" disabled={busy} onClick={onClose}>
          Cancel
        </Button>
      </div>
      <ErrorNote error={error} />
    </form>
  )
}

function Choice<T extends string>({
  name,
  value,
  current,
  set,
  label,
}: {
  name: string
  value: T
  current: T
  set: (v: T) => void
  label: string
}) {
  return (
    <label class="choice">
      <input
        type="radio"
        name={name}
        value={value}
        checked={current === value}
        onChange={() => set(value)}
      />{' '}
      {label}
    </label>
  )
}

/** How many allows of the same kind make the card offer the matching rule. */
export const SUGGEST_AFTER = 3

const sameMatch = (a: PolicyMatch, b: PolicyMatch) => JSON.stringify(a) === JSON.stringify(b)

/**
 * After the person allowed the same kind of action 3 times in this channel (the same proposed
 * rule, read from the approval history), the card offers that rule. Never for a destructive
 * command. Only a hint: the rule is still read, narrowed and signed in the editor.
 */
export function useSuggestion(message: Message, block: Block): number {
  const [count, setCount] = useState(0)
  const tool = typeof block.tool === 'string' ? block.tool : ''
  const command = commandOf(tool, block.input)
  useEffect(() => {
    if (command === undefined || isDangerousCommand(command)) return
    const mine = proposedMatch(tool, block.input)
    let live = true
    approvalHistory(message.channel_id, undefined, 100).then(
      (records) => {
        const same = records.filter((r) => {
          const answer = r.answer as { decision?: unknown } | undefined
          if (r.status !== 'answered' || answer?.decision !== 'allow' || !r.tool) return false
          if (r.message_id === message.id || r.summary === undefined) return false
          const past = commandOf(r.tool, { command: r.summary })
          return past !== undefined && sameMatch(proposedMatch(r.tool, { command: past }), mine)
        })
        if (live) setCount(same.length)
      },
      () => {},
    )
    return () => {
      live = false
    }
  }, [message.id])
  return count >= SUGGEST_AFTER ? count : 0
}

export function Suggestion({
  count,
  block,
  onPick,
}: {
  count: number
  block: Block
  onPick: () => void
}) {
  const tool = typeof block.tool === 'string' ? block.tool : ''
  const match = proposedMatch(tool, block.input)
  const words = match.kind === 'prefix' ? `commands starting \`${match.command}\`` : 'this command'
  return (
    <p class="ap-suggestion">
      You allowed {words} {count} times.{' '}
      <Button variant="quiet" onClick={onPick}>
        Always allow…
      </Button>
    </p>
  )
}
