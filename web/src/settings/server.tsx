import { useEffect, useState } from 'preact/hooks'
import { Button, CopyText, ErrorNote, useAction } from '../components/ui.tsx'
import { del, enc, patch, post } from '../lib/api.ts'
import { fromNow } from '../lib/format.ts'
import { useSession } from '../lib/session.ts'
import type { Me, RegistrationMode } from '../lib/types.ts'
import { useList } from './use-list.ts'

/** The owner's registration mode and people; invites for whoever may invite. */
export function RegistrationSettings() {
  const { info, refreshInfo } = useSession()
  // Shown at once; put back if the server says no.
  const [mode, setMode] = useState(info.registration)
  const [save, saving, error] = useAction(async (next: RegistrationMode) => {
    setMode(next)
    try {
      await patch('/v1/app/settings', { registration: next })
    } finally {
      await refreshInfo().catch(() => {})
    }
  })
  useEffect(() => setMode(info.registration), [info.registration])
  return (
    <section class="card stack" aria-labelledby="registration">
      <h2 id="registration">Registration</h2>
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
    </section>
  )
}

interface Person extends Me {
  created_at: number
}

export function PeopleSettings() {
  const { items, error, reload } = useList<Person>('/v1/app/people', 'people')
  const [remove, , removeError] = useAction(async (p: Person) => {
    if (!confirm(`Remove ${p.email} with all their channels, messages and files?`)) return
    await del(`/v1/app/people/${enc(p.id)}`)
    await reload()
  })
  return (
    <section class="card stack" aria-labelledby="people">
      <h2 id="people">People</h2>
      <ErrorNote error={error ?? removeError} />
      <ul class="rows">
        {items?.map((p) => (
          <li key={p.id}>
            <div>
              <strong>{p.name ?? p.email}</strong>
              <span class="muted">
                {p.name ? `${p.email} · ` : ''}
                {p.is_owner ? 'Owner' : `joined ${fromNow(p.created_at)}`}
              </span>
            </div>
            {!p.is_owner && (
              <Button variant="quiet" onClick={() => remove(p)} aria-label={`Remove ${p.email}`}>
                Remove
              </Button>
            )}
          </li>
        ))}
      </ul>
    </section>
  )
}

interface Invite {
  id: string
  email: string | null
  created_at: number
  expires_at: number
}

export function InviteSettings() {
  const { items, error, reload } = useList<Invite>('/v1/app/invites', 'invites')
  const [email, setEmail] = useState('')
  const [link, setLink] = useState<string | null>(null)
  const [create, creating, createError] = useAction(async () => {
    const r = await post<{ invite: { link: string } }>(
      '/v1/app/invites',
      email.trim() ? { email: email.trim() } : {},
    )
    setLink(r.invite.link)
    setEmail('')
    await reload()
  })
  const [revoke, , revokeError] = useAction(async (i: Invite) => {
    await del(`/v1/app/invites/${enc(i.id)}`)
    await reload()
  })
  return (
    <section class="card stack" aria-labelledby="invites">
      <h2 id="invites">Invites</h2>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault()
          void create()
        }}
      >
        <input
          type="email"
          aria-label="Invitee's email (optional)"
          placeholder="Their email (optional)"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <Button type="submit" busy={creating}>
          Make an invite link
        </Button>
      </form>
      {link && <CopyText label="invite link" text={link} />}
      <ErrorNote error={error ?? createError ?? revokeError} />
      <ul class="rows">
        {items?.map((i) => (
          <li key={i.id}>
            <div>
              <strong>{i.email ?? 'Anyone with the link'}</strong>
              <span class="muted">expires {fromNow(i.expires_at)}</span>
            </div>
            <Button variant="quiet" onClick={() => revoke(i)}>
              Revoke
            </Button>
          </li>
        ))}
      </ul>
    </section>
  )
}
