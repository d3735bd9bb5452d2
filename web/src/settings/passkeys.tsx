import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import * as client from '../lib/client.ts'
import { fromNow } from '../lib/format.ts'
import { addPasskey } from '../lib/passkey.ts'
import { passkeysChanged } from '../lib/signing.ts'
import type { Passkey } from '../lib/types.ts'
import { ListRow, RowAction, SettingsCard } from './card.tsx'
import { useList } from './use-list.ts'

/**
 * The person's passkeys: add one on this device, rename, remove. Each change is told to the
 * answer cards (lib/signing.ts), which sign with these. Each shows its fingerprint as `hark
 * keys` and `hark init` print it, to compare with what an agent's machine pinned.
 */
export function PasskeySettings() {
  const { items, error, reload } = useList(client.passkeys)
  const [add, adding, addError] = useAction(async () => {
    await addPasskey()
    passkeysChanged()
    await reload()
  })
  const [rename, , renameError] = useAction(async (p: Passkey) => {
    const name = prompt('Name this passkey', p.name)
    if (name === null || !name.trim()) return
    await client.renamePasskey(p.id, name)
    passkeysChanged()
    await reload()
  })
  const [remove, , removeError] = useAction(async (p: Passkey) => {
    if (!confirm(`Remove the passkey “${p.name}”? It will no longer log you in.`)) return
    await client.removePasskey(p.id)
    passkeysChanged()
    await reload()
  })
  return (
    <SettingsCard id="passkeys" title="Passkeys">
      <ErrorNote error={error ?? addError ?? renameError ?? removeError} />
      {items?.length === 0 && <p class="muted">No passkeys yet: you log in with emailed codes.</p>}
      {items && items.length > 0 && (
        <p class="muted">
          Agents check your approvals against these keys. On an agent’s machine,{' '}
          <code>hark keys</code> shows the fingerprints it trusts: they should match these.
        </p>
      )}
      <ul class="rows">
        {items?.map((p) => (
          <ListRow
            key={p.id}
            title={p.name}
            detail={
              <>
                Added {fromNow(p.created_at)}
                {p.last_used_at ? ` · used ${fromNow(p.last_used_at)}` : ''}
                {p.backed_up ? ' · synced' : ''}
                {p.fingerprint && (
                  <>
                    <br />
                    Fingerprint <code class="fingerprint">{p.fingerprint}</code>
                  </>
                )}
              </>
            }
          >
            <div class="row">
              <RowAction verb="Rename" of={p.name} onClick={() => rename(p)} />
              <RowAction verb="Remove" of={p.name} onClick={() => remove(p)} />
            </div>
          </ListRow>
        ))}
      </ul>
      <Button busy={adding} onClick={() => add()}>
        Add a passkey on this device
      </Button>
    </SettingsCard>
  )
}
