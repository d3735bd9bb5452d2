import { Fragment } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { isInput } from '../../../../src/shared/blocks.ts'
import { fromNow } from '../../lib/format.ts'
import type { Block, Message } from '../../lib/types.ts'
import { useSignedSend } from '../../lib/use-signed-send.ts'
import { DisplayBlock } from '../blocks.tsx'
import { ChangedWarning, SigningNotes, SigningStatus } from '../signing-notes.tsx'
import { Button, ErrorNote } from '../ui.tsx'
import {
  answerOf,
  type FieldState,
  htmlOf,
  idOf,
  initialState,
  isSimple,
  isStaged,
} from './answers.ts'
import { InputField } from './input.tsx'
import { Outcome } from './outcome.tsx'
import { StagedReply } from './staged.tsx'

/**
 * A question: its blocks in order, the inputs live. The spec's submission rule: when the
 * message has exactly one simple input (a single choice, a confirm, an html question), picking
 * answers at once; otherwise one Send button submits every input together. Answer shapes
 * follow PRODUCT.md: one input → its value, several → an object keyed by block id.
 *
 * An html question is the exception: its embed runs the agent's code, so `reply()` in it only
 * stages a value. The staged value is shown here, outside the frame, and only the person's
 * click or key press on the app's own Send button sends it; a later reply replaces it until
 * then (docs/decisions.md, "Web app"; staged.tsx).
 */

/** After the staged value changes, how long its Send stays disabled: no swap under a click. */
const SETTLE_MS = 700

export function Question({
  message,
  onAnswered,
}: {
  message: Message
  onAnswered: (m: Message) => void
}) {
  const blocks = (message.body.blocks ?? []) as Block[]
  const inputs = blocks.filter(isInput)
  const open = message.ask?.status === 'open'
  const single = inputs.length === 1 && isSimple(inputs[0] as Block)
  const [states, setStates] = useState<Record<string, FieldState>>(() =>
    Object.fromEntries(inputs.map((b) => [idOf(b), initialState(b)])),
  )
  const [errors, setErrors] = useState<Record<string, string>>({})
  const form = useRef<HTMLFormElement>(null)
  const [settling, setSettling] = useState(false)
  const settleTimer = useRef<ReturnType<typeof setTimeout>>(undefined)
  useEffect(() => () => clearTimeout(settleTimer.current), [])

  const update = (id: string, next: FieldState) => {
    setStates((s) => ({ ...s, [id]: next }))
    setErrors((e) => {
      const { [id]: _, ...rest } = e
      return rest
    })
  }

  // A question asked with `proof: true` is answered signed by a passkey (lib/signing.ts).
  const signed = useSignedSend(
    message,
    onAnswered,
    'This question is closed: it was answered, cancelled or it expired.',
  )
  const { passkeys, busy, error, notSent, signs, changed, sending, check } = signed
  const submit = async (answer: unknown) => {
    if (!changed) await signed.send(answer)
  }

  /** Several inputs, or one that is not simple: check them all, then send them together. */
  const sendAll = (event: Event) => {
    event.preventDefault()
    if (settling) return
    const found: Record<string, string> = {}
    const values: Record<string, unknown> = {}
    for (const b of inputs) {
      const result = answerOf(b, states[idOf(b)] as FieldState)
      if ('error' in result) found[idOf(b)] = result.error
      else values[idOf(b)] = result.value
    }
    setErrors(found)
    const firstBad = inputs.find((b) => found[idOf(b)])
    if (firstBad) {
      const el = form.current?.querySelector<HTMLElement>(
        `[data-input="${CSS.escape(idOf(firstBad))}"] :is(input, textarea, button)`,
      )
      el?.focus()
      return
    }
    const only = inputs[0] as Block
    void submit(inputs.length === 1 ? values[idOf(only)] : values)
  }

  /** The embed's reply: staged, never sent; Send waits a moment after every change. */
  const onHtmlReply = (b: Block) => (value: unknown) => {
    if (!open || sending.current) return
    update(idOf(b), { kind: 'html', replied: true, value, html: htmlOf(b) })
    setSettling(true)
    clearTimeout(settleTimer.current)
    settleTimer.current = setTimeout(() => setSettling(false), SETTLE_MS)
  }

  /** The app's Send under a lone html question: sends exactly the value shown above it. */
  const sendStaged = (b: Block) => {
    const s = states[idOf(b)]
    if (settling || !isStaged(b, s)) return
    void submit(s.value)
  }

  const body = blocks.map((b, i) => {
    const key = b.id ?? `#${i}`
    if (open && b.type === 'html' && isInput(b)) {
      return (
        <Fragment key={key}>
          <DisplayBlock block={b} channelId={message.channel_id} onHtmlReply={onHtmlReply(b)} />
          <StagedReply
            block={b}
            state={states[idOf(b)]}
            single={single}
            busy={busy}
            settling={settling}
            onSend={() => sendStaged(b)}
          />
        </Fragment>
      )
    }
    if (!isInput(b) || b.type === 'html') {
      return <DisplayBlock key={key} block={b} channelId={message.channel_id} />
    }
    if (!open) return null
    return (
      <div key={key} data-input={idOf(b)} class="q-input">
        <InputField
          block={b}
          state={states[idOf(b)] as FieldState}
          error={errors[idOf(b)]}
          single={single}
          busy={busy}
          onChange={(s) => update(idOf(b), s)}
          onPick={(v) => void submit(v)}
        />
      </div>
    )
  })

  const htmlState = inputs.find((b) => b.type === 'html')
  return (
    <div class="question">
      {open ? (
        <form ref={form} onSubmit={sendAll} noValidate aria-busy={busy || undefined}>
          {changed ? <ChangedWarning /> : <SigningNotes check={check} passkeys={passkeys} />}
          {body}
          {htmlState && !single && errors[idOf(htmlState)] && (
            <ErrorNote error={errors[idOf(htmlState)]} />
          )}
          {!single && (
            <div class="q-actions">
              <Button type="submit" variant="primary" busy={busy} disabled={settling || changed}>
                Send
              </Button>
            </div>
          )}
          {busy && signs && <SigningStatus />}
          {notSent && notSent.kind !== 'changed' && (
            <ErrorNote error={`Not sent: ${lower(notSent.message)} Answer again to retry.`} />
          )}
          <ErrorNote error={error} />
          {message.ask?.expires_at && (
            <p class="q-expiry">Expires {fromNow(message.ask.expires_at)}</p>
          )}
        </form>
      ) : (
        <>
          {body}
          <Outcome message={message} inputs={inputs} />
        </>
      )}
    </div>
  )
}

const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1)
