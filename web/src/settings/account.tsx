import { useState } from 'preact/hooks'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import * as client from '../lib/client.ts'
import { useSession } from '../lib/session.ts'
import { applyTheme, savedTheme, type Theme } from '../lib/theme.ts'
import { SettingsCard } from './card.tsx'

/** Who is logged in, the theme, and logging out (here or everywhere). */
export function AccountSettings() {
  const { me, signedOut } = useSession()
  const [theme, setTheme] = useState<Theme>(savedTheme())
  const [logOut, out, outError] = useAction(async (everywhere: boolean) => {
    await client.logOut(everywhere)
    signedOut()
  })
  if (!me) return null
  return (
    <SettingsCard id="account" title="Account">
      <p>
        {me.name ? `${me.name} · ` : ''}
        {me.email}
        {me.is_owner && <span class="badge"> Owner</span>}
      </p>
      <fieldset class="segmented">
        <legend>Theme</legend>
        {(['system', 'light', 'dark'] as Theme[]).map((t) => (
          <label key={t}>
            <input
              type="radio"
              name="theme"
              checked={theme === t}
              onChange={() => {
                setTheme(t)
                applyTheme(t, true)
              }}
            />
            <span>{t === 'system' ? 'System' : t === 'light' ? 'Light' : 'Dark'}</span>
          </label>
        ))}
      </fieldset>
      <div class="row">
        <Button busy={out} onClick={() => logOut(false)}>
          Log out
        </Button>
        <Button variant="quiet" busy={out} onClick={() => logOut(true)}>
          Log out everywhere
        </Button>
      </div>
      <ErrorNote error={outError} />
    </SettingsCard>
  )
}
