import { SignUpForm } from '../components/sign-up-form.tsx'
import { navigate } from '../lib/router.ts'
import { useSession } from '../lib/session.ts'

/**
 * Creating an account with an invite (`/invite#CODE`: the code stays in the fragment, out of
 * every log) or, when the server is open, without one (`/signup`).
 */
export function SignUp({ invite }: { invite?: string }) {
  const { info, signedIn } = useSession()
  if (invite === undefined && info.registration !== 'open') {
    return (
      <main class="auth">
        <h1>Sign-up is closed</h1>
        <p>Ask the owner of this server for an invite link.</p>
        <a href="/">Log in</a>
      </main>
    )
  }
  return (
    <main class="auth">
      <h1>Join Hark</h1>
      <p class="lead">
        {invite ? 'You were invited to this Hark server.' : 'Create your account on this server.'} A
        passkey is all you need to log in.
      </p>
      <div class="card">
        <SignUpForm
          admission={invite ? { invite } : {}}
          onSignedIn={(me) => {
            signedIn(me)
            navigate('/', { replace: true })
          }}
        />
      </div>
      <p>
        Already have an account? <a href="/">Log in</a>
      </p>
    </main>
  )
}
