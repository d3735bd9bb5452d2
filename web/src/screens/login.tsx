import { EmailCode } from '../components/email-code.tsx'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import { logInWithPasskey, passkeysSupported } from '../lib/passkey.ts'
import { useSession } from '../lib/session.ts'

/** Logging in: a passkey first (no email needed: the passkey names the person). */
export function Login() {
  const { info, signedIn } = useSession()
  const [logIn, busy, error] = useAction(async () => signedIn(await logInWithPasskey()))
  const supported = passkeysSupported()
  return (
    <main class="auth">
      <h1>
        <img src="/icons/icon-192.png" alt="" width="48" height="48" /> Hark
      </h1>
      <p class="lead">Log in to see your agents’ messages and questions.</p>
      <div class="card stack">
        {supported ? (
          <Button variant="primary" busy={busy} onClick={() => logIn()}>
            Log in with a passkey
          </Button>
        ) : (
          <p>This browser cannot use passkeys.</p>
        )}
        <ErrorNote error={error} />
        {info.features.email && (
          <>
            <p class="divider">
              <span>or</span>
            </p>
            <EmailCode purpose="login" onSignedIn={signedIn} />
          </>
        )}
      </div>
      {info.registration === 'open' && (
        <p>
          New here? <a href="/signup">Create an account</a>
        </p>
      )}
    </main>
  )
}
