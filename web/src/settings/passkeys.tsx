import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import { del, enc, patch } from '../lib/api.ts'
import { fromNow } from '../lib/format.ts'
import { addPasskey } from '../lib/passkey.ts'
import type { Passkey } from '../lib/types.ts'
import { useList } from './use-list.ts'

/** The person's passkeys: add one on this device, rename, remove. */
export function PasskeySettings() {
  const { items, error, reload } = useList<Passkey>('/v1/app/passkeys', 'passkeys')
  const [add, adding, addError] = useAction(async () => {
    await addPasskey()
    await reload()
  })
  const [rename, , renameError] = useAction(async (p: Passkey) => {
    const name = prompt('Name this passkey', p.name)
    if (name === null || !name.trim()) return
    await patch(`/v1/app/passkeys/${enc(p.id)}`, { name })
    await reload()
  })
  const [remove, , removeError] = useAction(async (p: Passkey) => {
    if (!confirm(`Remove the passkey “${p.name}”? It will no longer log you in.`)) return
    await del(`/v1/app/passkeys/${enc(p.id)}`)
    await reload()
  })
  return (
    <section class="card stack" aria-labelledby="passkeys">
      <h2 id="passkeys">Passkeys</h2>
      <ErrorNote error={error ?? addError ?? renameError ?? removeError} />
      {items?.length === 0 && <p class="muted">No passkeys yet: you log in with emailed codes.</p>}
      <ul class="rows">
        {items?.map((p) => (
          <li key={p.id}>
            <div>
              <strong>{p.name}</strong>
              <span class="muted">
                Added {fromNow(p.created_at)}
                {p.last_used_at ? ` · used ${fromNow(p.last_used_at)}` : ''}
                {p.backed_up ? ' · synced' : ''}
              </span>
            </div>
            <div class="row">
              <Button variant="quiet" onClick={() => rename(p)} aria-label={`Rename ${p.name}`}>
                Rename
              </Button>
              <Button variant="quiet" onClick={() => remove(p)} aria-label={`Remove ${p.name}`}>
                Remove
              </Button>
            </div>
          </li>
        ))}
      </ul>
      <Button busy={adding} onClick={() => add()}>
        Add a passkey on this device
      </Button>
    </section>
  )
}
