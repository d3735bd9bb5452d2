import { useState } from 'preact/hooks'
import { signUpWithPasskey } from '../lib/passkey.ts'
import { useSession } from '../lib/session.ts'
import type { Me } from '../lib/types.ts'
import { EmailCode } from './email-code.tsx'
import { EmailField, Form } from './form.tsx'
import { Button, ErrorNote, Field, useAction } from './ui.tsx'

/**
 * Creating an account (the owner at setup, an invitee, anyone in open mode): a passkey first;
 * an emailed code when the server can send mail.
 */
export function SignUpForm({
  admission,
  submitLabel = 'Create account with a passkey',
  onSignedIn,
}: {
  admission: { setup_token?: string; invite?: string }
  submitLabel?: string
  onSignedIn: (me: Me) => void
}) {
  const { info } = useSession()
  const [email, setEmail] = useState('')
  const [name, setName] = useState('')
  const [byEmail, setByEmail] = useState(false)
  const [create, creating, error] = useAction(async () => {
    onSignedIn(await signUpWithPasskey({ email, name: name || undefined, ...admission }))
  })

  return (
    <div class="stack">
      <Form
        class="stack"
        onSubmit={() => {
          if (!byEmail) void create()
        }}
      >
        <EmailField value={email} onValue={setEmail} />
        <Field label="Your name" hint="Optional">
          <input
            type="text"
            autocomplete="name"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        {!byEmail && (
          <Button type="submit" variant="primary" busy={creating}>
            {submitLabel}
          </Button>
        )}
        <ErrorNote error={error} />
      </Form>
      {info.features.email &&
        (byEmail ? (
          <EmailCode
            key={email}
            purpose="signup"
            email={email}
            extra={{ name: name || undefined, ...admission }}
            onSignedIn={onSignedIn}
          />
        ) : (
          <Button variant="quiet" onClick={() => setByEmail(true)} disabled={!email}>
            Use an emailed code instead
          </Button>
        ))}
    </div>
  )
}
