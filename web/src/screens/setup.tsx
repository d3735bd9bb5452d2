import { useState } from 'preact/hooks'
import { Form, InlineForm } from '../components/form.tsx'
import { PendingPairings } from '../components/pending-pairings.tsx'
import { SignUpForm } from '../components/sign-up-form.tsx'
import { Button, CopyText, ErrorNote, useAction } from '../components/ui.tsx'
import * as client from '../lib/client.ts'
import { navigate, useFragmentSecret } from '../lib/router.ts'
import { useSession } from '../lib/session.ts'
import type { RegistrationMode } from '../lib/types.ts'
import { InstallSteps, TestNotification, testTapped } from '../settings/phone-setup.tsx'
import { EnablePushButton } from '../settings/push.tsx'
import { PairApproval } from './pair.tsx'

/**
 * First run, from the link `hark serve` prints (`/setup#token=...`): create the owner, pick who
 * may register, and end at connecting the first agent. The token lives in the fragment (never
 * sent to a server) and is dropped from the address bar at once.
 */
function takeToken(): string | undefined {
  const token = new URLSearchParams(location.hash.slice(1)).get('token')
  if (location.hash) history.replaceState(null, '', '/setup')
  return token || undefined
}

type Step = 'owner' | 'registration' | 'notifications' | 'connect'

const MODES: { mode: RegistrationMode; title: string; text: string }[] = [
  {
    mode: 'closed',
    title: 'Only me',
    text: 'Nobody else can create an account. (You can still invite people.)',
  },
  {
    mode: 'invite',
    title: 'By invite',
    text: 'People with an invite link can create an account; anyone here can invite.',
  },
  { mode: 'open', title: 'Open', text: 'Anyone who can reach this server can create an account.' },
]

export function Setup() {
  const { info, me, signedIn, refreshInfo } = useSession()
  const token = useFragmentSecret(takeToken)
  // Back from tapping the test notification: the wizard goes on where it was.
  const [step, setStep] = useState<Step>(
    me ? (testTapped() ? 'notifications' : 'registration') : 'owner',
  )

  if (step === 'owner' && !info.needs_setup) {
    return (
      <main class="auth">
        <h1>Setup is done</h1>
        <p>This server already has an owner.</p>
        <a href="/">Open Hark</a>
      </main>
    )
  }
  return (
    <main class="auth setup">
      <h1>Set up Hark</h1>
      <BaseUrlCheck />
      <ol class="steps" aria-label="Setup steps">
        {(['owner', 'registration', 'notifications', 'connect'] as Step[]).map((s, i) => (
          <li key={s} aria-current={s === step ? 'step' : undefined}>
            {i + 1}.{' '}
            {s === 'owner'
              ? 'Your account'
              : s === 'registration'
                ? 'Who can join'
                : s === 'notifications'
                  ? 'Notifications'
                  : 'Connect an agent'}
          </li>
        ))}
      </ol>
      {step === 'owner' &&
        (token ? (
          <div class="card stack">
            <h2>Create the owner account</h2>
            <p>You will own this server. Your passkey is how you log in.</p>
            <SignUpForm
              admission={{ setup_token: token }}
              submitLabel="Create owner with a passkey"
              onSignedIn={(user) => {
                signedIn(user)
                void refreshInfo()
                setStep('registration')
              }}
            />
          </div>
        ) : (
          <div class="card">
            <p>
              Open the setup link that <code>hark serve</code> printed when it started (it is also
              in the file <code>setup-token</code> in the data directory).
            </p>
          </div>
        ))}
      {step === 'registration' && <RegistrationStep onDone={() => setStep('notifications')} />}
      {step === 'notifications' && <NotificationsStep onDone={() => setStep('connect')} />}
      {step === 'connect' && <ConnectStep />}
    </main>
  )
}

function RegistrationStep({ onDone }: { onDone: () => void }) {
  const { info, refreshInfo } = useSession()
  const [mode, setMode] = useState<RegistrationMode>(info.registration)
  const [save, saving, error] = useAction(async () => {
    await client.setRegistration(mode)
    await refreshInfo()
    onDone()
  })
  return (
    <Form class="card stack" onSubmit={() => void save()}>
      <fieldset class="stack">
        <legend>
          <h2>Who can create an account?</h2>
        </legend>
        {MODES.map((m) => (
          <label key={m.mode} class="q-check">
            <input
              type="radio"
              name="registration"
              value={m.mode}
              checked={mode === m.mode}
              onChange={() => setMode(m.mode)}
            />
            <span>
              <span class="q-option-label">{m.title}</span>
              <span class="q-option-description">{m.text}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <Button type="submit" variant="primary" busy={saving}>
        Continue
      </Button>
      <ErrorNote error={error} />
    </Form>
  )
}

/**
 * Agents' questions are only useful if they reach the person: offer push right away, with how
 * to install the app on a phone and a test that proves the round trip (issue 27).
 */
function NotificationsStep({ onDone }: { onDone: () => void }) {
  return (
    <div class="card stack">
      <h2>Notifications</h2>
      <p>
        Get a notification on this device when an agent writes or asks something. You can add your
        other devices later in Settings.
      </p>
      <EnablePushButton />
      <TestNotification opens="setup" />
      <InstallSteps />
      <Button variant="primary" onClick={onDone}>
        Continue
      </Button>
    </div>
  )
}

/**
 * The base URL check: passkeys, links and `hark init` all use the server's --base-url. Opened at
 * another address, setup would make a passkey for the wrong site: say so before it happens.
 */
function BaseUrlCheck() {
  const { info } = useSession()
  const expected = new URL(info.base_url).origin
  if (expected === location.origin) {
    return (
      <p class="muted" data-check="base-url-ok">
        Server address: <strong>{info.base_url}</strong>
      </p>
    )
  }
  return (
    <div class="card warning" role="alert" data-check="base-url-mismatch">
      <p>
        This server’s address is set to <strong>{info.base_url}</strong>, but you opened it at{' '}
        <strong>{location.origin}</strong>. Passkeys, links and agents use the set address: open
        Hark there, or restart <code>hark serve</code> with{' '}
        <code>--base-url {location.origin}</code> (or <code>HARK_BASE_URL</code>).
      </p>
    </div>
  )
}

function ConnectStep() {
  const { info } = useSession()
  // A pending `hark init` picked from the live list: answered here, in place.
  const [picked, setPicked] = useState<string | null>(null)
  return (
    <div class="card stack">
      <h2>Connect your first agent</h2>
      <p>
        Your server’s address is <strong>{info.base_url}</strong>. On the machine where the agent
        works, run:
      </p>
      <CopyText label="init command" text={`hark init ${info.base_url}`} />
      <p>
        It shows a code, and its request appears here as it arrives, with the machine’s name and
        address. Pick it, check the code, and approve it.
      </p>
      <PendingPairings onPick={setPicked} />
      {picked && <PairApproval key={picked} initialCode={picked} />}
      <p>Or give the agent a join link:</p>
      <JoinLinkMaker />
      <Button variant="primary" onClick={() => navigate('/', { replace: true })}>
        Open Hark
      </Button>
    </div>
  )
}

/** Makes a single-use join link for a new channel and shows the command that redeems it. */
export function JoinLinkMaker() {
  const [label, setLabel] = useState('')
  const [link, setLink] = useState<string | null>(null)
  const [make, making, error] = useAction(async () => {
    setLink(await client.createJoinLink(label.trim() ? { label: label.trim() } : {}))
  })
  return (
    <div class="stack">
      <InlineForm
        label="Agent name (optional)"
        placeholder="Agent name (optional)"
        value={label}
        onValue={setLabel}
        action="Make a join link"
        busy={making}
        onSubmit={() => void make()}
        error={error}
      />
      {link && (
        <>
          <CopyText label="join command" text={`hark join ${link}`} />
          <p class="muted">Works once, for 15 minutes.</p>
        </>
      )}
    </div>
  )
}
