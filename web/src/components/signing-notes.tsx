import type { RequestCheck } from '../lib/signing.ts'
import type { Passkey } from '../lib/types.ts'

/**
 * What a question that takes a signed answer tells the person about signing
 * (lib/signing.ts): that the request changed on the server and will not be signed, that they
 * have no passkey to sign with, or that the passkey prompt is waiting on them.
 */

/** The server's request hash is not of what the card shows: the app signs nothing. */
export function ChangedWarning({ approval = false }: { approval?: boolean }) {
  return (
    <p class="sign-warning" role="alert">
      <strong>⚠ This request was changed on the server; not signed.</strong> What is shown is not
      what the agent asked, so the app signs no answer to it and nothing was sent.
      {approval && ' Deny still works: it is sent unsigned.'}
    </p>
  )
}

/** For a person with no passkey (they log in by emailed code): an Allow goes unsigned. */
export function NoPasskeyNote({
  answered = false,
  subject = 'it',
}: {
  answered?: boolean
  /** What an agent will not act on: "an Allow" on an approval. */
  subject?: string
}) {
  return (
    <p class="sign-note" role="note">
      {answered
        ? 'Sent unsigned: agents that check signatures will not act on it. To sign your answers, add a passkey in '
        : `You have no passkey, so your answer is sent unsigned: agents that check signatures will not act on ${subject}. Add a passkey in `}
      <a href="/settings#passkeys">Settings → Passkeys</a>.
    </p>
  )
}

/** Notes for an open question: a changed request, or no passkey to sign with. */
export function SigningNotes({
  check,
  passkeys,
  approval = false,
}: {
  check: RequestCheck | undefined
  passkeys: Passkey[] | undefined
  approval?: boolean
}) {
  if (check === 'changed') return <ChangedWarning approval={approval} />
  if (check === 'ok' && passkeys?.length === 0) {
    return <NoPasskeyNote subject={approval ? 'an Allow' : 'it'} />
  }
  return null
}

/** While the browser's passkey prompt is up. */
export function SigningStatus({ label = 'Confirm with your passkey…' }: { label?: string }) {
  return (
    <p class="sign-status" role="status">
      {label}
    </p>
  )
}
