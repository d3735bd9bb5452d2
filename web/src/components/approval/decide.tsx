import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { ApprovalAnswer } from '../../../../src/shared/blocks.ts'
import { allowLinkFor, clearAct, takeIntent } from '../../lib/act.ts'
import { fromNow } from '../../lib/format.ts'
import type { Block, Message } from '../../lib/types.ts'
import { useSignedSend } from '../../lib/use-signed-send.ts'
import { ChangedWarning, SigningNotes, SigningStatus } from '../signing-notes.tsx'
import { Button, ErrorNote } from '../ui.tsx'
import { RuleEditor, RuleStarters, Suggestion, useSuggestion } from './rule-editor.tsx'

/**
 * An open approval's buttons: Allow, Allow for this session (only when the agent offered it),
 * or Deny with an optional message that goes back to the agent. Every answer is signed by the
 * person's passkey (lib/signing.ts): one prompt per answer. An Allow that cannot be signed
 * (prompt cancelled, request changed on the server) is not sent, and the card says so; a deny
 * that cannot be signed is sent unsigned, since a deny never lets an agent act.
 */
export function Decide({
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
  const sessionRules = Array.isArray(block.session_rules)
    ? (block.session_rules as unknown[]).filter((r): r is string => typeof r === 'string')
    : []
  const {
    passkeys,
    check,
    busy,
    error,
    notSent,
    send: sendSigned,
    signs,
    changed,
  } = useSignedSend(
    message,
    onAnswered,
    'This approval is closed: it was answered, withdrawn or it expired.',
  )
  const [denying, setDenying] = useState(false)
  /** "Always allow…" / "Never allow…" open: the rule editor (rule-editor.tsx). */
  const [rule, setRule] = useState<'allow' | 'deny' | null>(null)
  /** Allowed the same kind of action 3 times or more: the card offers the rule. */
  const suggested = useSuggestion(message, block)
  const [reason, setReason] = useState('')
  /** Landed here from a link to Allow: the person taps Allow to sign. */
  const [hint, setHint] = useState(false)
  const reasonField = useRef<HTMLTextAreaElement>(null)
  const denyButton = useRef<HTMLButtonElement>(null)
  const allowButton = useRef<HTMLButtonElement>(null)
  const wasDenying = useRef(false)

  // Focus follows the step: into the message field when it opens, back to Deny when it closes.
  useLayoutEffect(() => {
    if (denying) reasonField.current?.focus()
    else if (wasDenying.current) denyButton.current?.focus()
    wasDenying.current = denying
  }, [denying])

  // The hint puts focus on Allow, so one tap (or Enter) signs.
  useEffect(() => {
    if (hint) allowButton.current?.focus()
  }, [hint])

  const send = async (answer: ApprovalAnswer, auto = false) => {
    setHint(false)
    const notSigned = await sendSigned(answer)
    // Started by the notification's Allow and not signed (no prompt without a tap on this
    // browser, or closed): Allow waits focused for the person's own tap.
    if (notSigned && auto && notSigned.kind !== 'changed') setHint(true)
  }

  // `/c/…?act=allow#<this message>`: the notification's Allow. The prompt starts by itself
  // only when the service worker noted that tap (lib/act.ts) and the action is not marked
  // destructive (nor holds hidden characters): those get read on the card, then a tap.
  useEffect(() => {
    if (!allowLinkFor(message.id)) return
    clearAct()
    let live = true
    void takeIntent(message.id).then((tapped) => {
      if (!live) return
      if (tapped && !danger) void send({ decision: 'allow' }, true)
      else setHint(true)
    })
    return () => {
      live = false
    }
  }, [])

  const deny = (event: Event) => {
    event.preventDefault()
    const text = reason.trim()
    void send(text ? { decision: 'deny', message: text } : { decision: 'deny' })
  }

  return (
    <div class="ap-decide" aria-busy={busy || undefined}>
      {changed ? (
        <ChangedWarning approval />
      ) : (
        <SigningNotes check={check} passkeys={passkeys} approval />
      )}
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
            ref={allowButton}
            variant={danger ? 'danger' : 'primary'}
            class="ap-allow"
            busy={busy}
            disabled={changed}
            onClick={() => void send({ decision: 'allow' })}
          >
            Allow
          </Button>
          {scopes.includes('session') && (
            <Button
              busy={busy}
              disabled={changed}
              onClick={() => void send({ decision: 'allow', scope: 'session' })}
            >
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
      {!denying && scopes.includes('session') && sessionRules.length > 0 && (
        <p class="ap-session-rules">
          Allow for this session remembers:{' '}
          {sessionRules.map((r, i) => (
            <span key={r}>
              {i > 0 && ', '}
              <code>{r}</code>
            </span>
          ))}
        </p>
      )}
      {!denying &&
        (rule ? (
          <RuleEditor message={message} block={block} effect={rule} onClose={() => setRule(null)} />
        ) : (
          passkeys !== undefined &&
          passkeys.length > 0 && (
            <>
              {suggested > 0 && (
                <Suggestion count={suggested} block={block} onPick={() => setRule('allow')} />
              )}
              <RuleStarters onPick={setRule} />
            </>
          )
        ))}
      {busy && signs && <SigningStatus />}
      {hint && !busy && (
        <p class="sign-hint" role="status">
          Tap Allow to sign it with your passkey.
        </p>
      )}
      {notSent && notSent.kind !== 'changed' && (
        <p class="error-note" role="alert">
          Not sent: {lower(notSent.message)}{' '}
          {notSent.kind === 'unsupported'
            ? 'Answer on a device with your passkey.'
            : 'Tap Allow to try again.'}
        </p>
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

const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1)
