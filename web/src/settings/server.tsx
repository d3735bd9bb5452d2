import { useEffect, useState } from 'preact/hooks'
import { InlineForm } from '../components/form.tsx'
import { Button, CopyText, ErrorNote, useAction } from '../components/ui.tsx'
import * as client from '../lib/client.ts'
import { fromNow } from '../lib/format.ts'
import { useSession } from '../lib/session.ts'
import type { Invite, Person, RegistrationMode } from '../lib/types.ts'
import { ListRow, RowAction, SettingsCard } from './card.tsx'
import { useList } from './use-list.ts'

/** The owner's registration mode and people; invites for whoever may invite. */
export function RegistrationSettings() {
  const { info, refreshInfo } = useSession()
  // Shown at once; put back if the server says no.
  const [mode, setMode] = useState(info.registration)
  const [save, saving, error] = useAction(async (next: RegistrationMode) => {
    setMode(next)
    try {
      await client.setRegistration(next)
    } finally {
      await refreshInfo().catch(() => {})
    }
  })
  useEffect(() => setMode(info.registration), [info.registration])
  return (
    <SettingsCard id="registration" title="Registration">
      <fieldset class="segmented" disabled={saving}>
        <legend>Who can create an account</legend>
        {(['closed', 'invite', 'open'] as RegistrationMode[]).map((m) => (
          <label key={m}>
            <input type="radio" name="registration" checked={mode === m} onChange={() => save(m)} />
            <span>
              {m === 'closed' ? 'Only the owner' : m === 'invite' ? 'By invite' : 'Anyone'}
            </span>
          </label>
        ))}
      </fieldset>
      <ErrorNote error={error} />
    </SettingsCard>
  )
}

export function PeopleSettings() {
  const { items, error, reload } = useList(client.people)
  const [remove, , removeError] = useAction(async (p: Person) => {
    if (!confirm(`Remove ${p.email} with all their channels, messages and files?`)) return
    await client.removePerson(p.id)
    await reload()
  })
  return (
    <SettingsCard id="people" title="People">
      <ErrorNote error={error ?? removeError} />
      <ul class="rows">
        {items?.map((p) => (
          <ListRow
            key={p.id}
            title={p.name ?? p.email}
            detail={
              <>
                {p.name ? `${p.email} · ` : ''}
                {p.is_owner ? 'Owner' : `joined ${fromNow(p.created_at)}`}
              </>
            }
          >
            {!p.is_owner && <RowAction verb="Remove" of={p.email} onClick={() => remove(p)} />}
          </ListRow>
        ))}
      </ul>
    </SettingsCard>
  )
}

export function InviteSettings() {
  const { items, error, reload } = useList(client.invites)
  const [email, setEmail] = useState('')
  const [link, setLink] = useState<string | null>(null)
  const [create, creating, createError] = useAction(async () => {
    setLink(await client.createInvite(email.trim() || undefined))
    setEmail('')
    await reload()
  })
  const [revoke, , revokeError] = useAction(async (i: Invite) => {
    await client.revokeInvite(i.id)
    await reload()
  })
  return (
    <SettingsCard id="invites" title="Invites">
      <InlineForm
        type="email"
        label="Invitee's email (optional)"
        placeholder="Their email (optional)"
        value={email}
        onValue={setEmail}
        action="Make an invite link"
        busy={creating}
        onSubmit={() => void create()}
      />
      {link && <CopyText label="invite link" text={link} />}
      <ErrorNote error={error ?? createError ?? revokeError} />
      <ul class="rows">
        {items?.map((i) => (
          <ListRow
            key={i.id}
            title={i.email ?? 'Anyone with the link'}
            detail={`expires ${fromNow(i.expires_at)}`}
          >
            <Button variant="quiet" onClick={() => revoke(i)}>
              Revoke
            </Button>
          </ListRow>
        ))}
      </ul>
    </SettingsCard>
  )
}
