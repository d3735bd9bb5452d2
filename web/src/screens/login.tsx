import { EmailCode } from '../components/email-code.tsx'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import { logInWithPasskey, passkeysSupported } from '../lib/passkey.ts'
import { useSession } from '../lib/session.ts'
import type { Me } from '../lib/types.ts'

/**
 * Logging in: a passkey first (no email needed: the passkey names the person). A device without
 * one is never a dead end: an emailed code when the server can send mail, else the way to a
 * sign-in link (the owner makes one; it adds a passkey on the device that opens it).
 */
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
      </div>
      <NoPasskeyHere email={info.features.email} onSignedIn={signedIn} />
      {info.registration === 'open' && (
        <p>
          New here? <a href="/signup">Create an account</a>
        </p>
      )}
    </main>
  )
}

function NoPasskeyHere({ email, onSignedIn }: { email: boolean; onSignedIn: (me: Me) => void }) {
  return (
    <section class="card stack no-passkey" aria-labelledby="no-passkey">
      <h2 id="no-passkey">No passkey on this device?</h2>
      {email ? (
        <>
          <p>Log in with a code sent to your email address.</p>
          <EmailCode purpose="login" onSignedIn={onSignedIn} />
        </>
      ) : (
        <>
          <p>
            Ask the owner of this Hark for a sign-in link. Opening it here adds a passkey on this
            device and logs you in; it works once, for 24 hours.
          </p>
          <p>
            The owner makes it on the server with <code>hark admin user link YOUR-EMAIL</code> (that
            is you, if you run this server).
          </p>
        </>
      )}
    </section>
  )
}
