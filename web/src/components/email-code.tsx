import { useState } from 'preact/hooks'
import * as client from '../lib/client.ts'
import type { Me } from '../lib/types.ts'
import { EmailField, Form, RequiredField } from './form.tsx'
import { Button, ErrorNote, useAction } from './ui.tsx'

/**
 * The emailed-code way in: ask for a code, type it. For sign-ups the start request carries
 * the name and the admission (setup token or invite); the verify request only the code.
 */
export function EmailCode({
  purpose,
  email: givenEmail,
  extra = {},
  onSignedIn,
}: {
  purpose: 'login' | 'signup'
  /** Known already (the sign-up form asked): skip straight to sending. */
  email?: string
  extra?: Omit<client.EmailCodeRequest, 'email' | 'purpose'>
  onSignedIn: (me: Me) => void
}) {
  const [email, setEmail] = useState(givenEmail ?? '')
  const [sent, setSent] = useState(false)
  const [code, setCode] = useState('')
  const [start, starting, startError] = useAction(async () => {
    await client.startEmailCode({ email, purpose, ...extra })
    setSent(true)
  })
  const [verify, verifying, verifyError] = useAction(async () => {
    onSignedIn(await client.verifyEmailCode({ email, purpose, code }))
  })

  if (!sent) {
    return (
      <Form class="stack" onSubmit={() => void start()}>
        {givenEmail === undefined && <EmailField value={email} onValue={setEmail} />}
        <Button type="submit" busy={starting}>
          Email me a code
        </Button>
        <ErrorNote error={startError} />
      </Form>
    )
  }
  return (
    <Form class="stack" onSubmit={() => void verify()}>
      <p>We sent a code to {email}. It works for a few minutes.</p>
      <RequiredField
        label="Code from the email"
        inputMode="numeric"
        autocomplete="one-time-code"
        value={code}
        onValue={setCode}
      />
      <Button type="submit" variant="primary" busy={verifying}>
        {purpose === 'login' ? 'Log in' : 'Create account'}
      </Button>
      <ErrorNote error={verifyError} />
      <Button variant="quiet" onClick={() => setSent(false)}>
        Send another code
      </Button>
    </Form>
  )
}
