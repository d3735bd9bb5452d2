import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import { passkeysSupported, signInWithLink } from '../lib/passkey.ts'
import { navigate, useFragmentSecret } from '../lib/router.ts'
import { useSession } from '../lib/session.ts'
import { passkeysChanged } from '../lib/signing.ts'

/**
 * A sign-in link from the server's operator (`/enrol#CODE`, made by `hark admin user add` or
 * `hark admin user link`): it creates a passkey on this device for the account it was made for,
 * once. The code lives in the fragment (never sent to a server log) and leaves the address bar at
 * once; it is kept for this tab only, so a reload before finishing still works.
 */
const KEY = 'hark.enrol'

function takeCode(): string {
  const fresh = location.hash.slice(1)
  if (location.hash) history.replaceState(null, '', '/enrol')
  if (fresh) sessionStorage.setItem(KEY, fresh)
  return fresh || (sessionStorage.getItem(KEY) ?? '')
}

export function Enrol() {
  const { signedIn } = useSession()
  const code = useFragmentSecret(takeCode)
  const [enrol, busy, error] = useAction(async () => {
    const me = await signInWithLink(code)
    sessionStorage.removeItem(KEY)
    passkeysChanged()
    signedIn(me)
    navigate('/', { replace: true })
  })
  return (
    <main class="auth">
      <h1>
        <img src="/icons/icon-192.png" alt="" width="48" height="48" /> Sign in to Hark
      </h1>
      {!code ? (
        <p class="lead">
          This page needs the whole sign-in link you were given. Ask the server's operator for a new
          one (<code>hark admin user link EMAIL</code>).
        </p>
      ) : (
        <>
          <p class="lead">
            Your sign-in link creates a passkey on this device: from then on it is how you log in,
            with no password. The link works once.
          </p>
          <div class="card stack">
            {passkeysSupported() ? (
              <Button variant="primary" busy={busy} onClick={() => enrol()}>
                Create a passkey and sign in
              </Button>
            ) : (
              <p>This browser cannot use passkeys: open the link in another one.</p>
            )}
            <ErrorNote error={error} />
          </div>
        </>
      )}
      <p>
        Already have a passkey here? <a href="/">Log in</a>
      </p>
    </main>
  )
}
