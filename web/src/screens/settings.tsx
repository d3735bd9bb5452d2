import { useEffect } from 'preact/hooks'
import { useSession } from '../lib/session.ts'
import { AccountSettings } from '../settings/account.tsx'
import { PasskeySettings } from '../settings/passkeys.tsx'
import { PolicySettings } from '../settings/policies.tsx'
import { PushSettings } from '../settings/push.tsx'
import { InviteSettings, PeopleSettings, RegistrationSettings } from '../settings/server.tsx'
import { SessionSettings } from '../settings/sessions.tsx'
import { TokenSettings } from '../settings/tokens.tsx'
import { PairApproval } from './pair.tsx'
import { JoinLinkMaker } from './setup.tsx'

/** Everything about the account and the server on one page, each part a card. */
export function Settings() {
  const { me, info } = useSession()
  // `/settings#connect` and friends: jump to that card once it is there.
  useEffect(() => {
    const id = location.hash.slice(1)
    if (id) document.getElementById(id)?.scrollIntoView()
  }, [])
  if (!me) return null
  return (
    <main class="page settings">
      <p>
        <a href="/">‹ Your agents</a>
      </p>
      <h1>Settings</h1>
      <section class="card stack" aria-labelledby="connect">
        <h2 id="connect">Connect an agent</h2>
        <p>
          Run <code>hark init {info.base_url}</code> where the agent works, then enter the code it
          shows:
        </p>
        <PairApproval />
        <p>
          Or make a single-use join link for <code>hark join</code>:
        </p>
        <JoinLinkMaker />
      </section>
      <AccountSettings />
      <PushSettings />
      <PasskeySettings />
      <PolicySettings />
      <SessionSettings />
      <TokenSettings />
      {me.is_owner && <RegistrationSettings />}
      {me.is_owner && <PeopleSettings />}
      {(me.is_owner || info.registration === 'invite') && <InviteSettings />}
      <p class="muted">Hark {info.version}</p>
    </main>
  )
}
