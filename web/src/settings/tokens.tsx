import { useState } from 'preact/hooks'
import { InlineForm } from '../components/form.tsx'
import { CopyText, ErrorNote, useAction } from '../components/ui.tsx'
import { useChannels } from '../lib/channels.ts'
import * as client from '../lib/client.ts'
import { fromNow } from '../lib/format.ts'
import type { TokenInfo } from '../lib/types.ts'
import { ListRow, RowAction, SettingsCard } from './card.tsx'
import { useList } from './use-list.ts'

/**
 * Tokens: each agent's (one per channel) and the person's own for scripts. Revoking stops a
 * token at once; rotating gives a new secret for the same purpose, shown here once.
 */
export function TokenSettings() {
  const { items, error, reload } = useList(client.tokens)
  const channels = useChannels()
  const [fresh, setFresh] = useState<{ label: string; token: string } | null>(null)
  const [label, setLabel] = useState('')
  const name = (t: TokenInfo) =>
    t.kind === 'agent'
      ? (channels?.find((c) => c.id === t.channel_id)?.label ?? t.label ?? 'Agent')
      : (t.label ?? 'Script')
  const [revoke, , revokeError] = useAction(async (t: TokenInfo) => {
    if (!confirm(`Revoke the token of “${name(t)}”? Whatever uses it stops working now.`)) return
    await client.revokeToken(t.id)
    await reload()
  })
  const [rotate, , rotateError] = useAction(async (t: TokenInfo) => {
    if (!confirm(`Replace the token of “${name(t)}”? The old one stops working now.`)) return
    setFresh({ label: name(t), token: await client.rotateToken(t.id) })
    await reload()
  })
  const [create, creating, createError] = useAction(async () => {
    const token = await client.createPersonToken(label.trim() ? label : undefined)
    setFresh({ label: label.trim() || 'Script', token })
    setLabel('')
    await reload()
  })
  return (
    <SettingsCard id="tokens" title="Tokens">
      <ErrorNote error={error ?? revokeError ?? rotateError ?? createError} />
      {fresh && (
        <div class="fresh-token" role="status">
          <p>
            New token for <strong>{fresh.label}</strong>. Copy it now: it is not shown again.
          </p>
          <CopyText label="token" text={fresh.token} />
        </div>
      )}
      <ul class="rows">
        {items?.map((t) => (
          <ListRow
            key={t.id}
            title={name(t)}
            detail={
              <>
                {t.kind === 'agent' ? 'Agent' : 'Person (scripts)'} · made {fromNow(t.created_at)}
                {t.last_used_at ? ` · used ${fromNow(t.last_used_at)}` : ' · never used'}
              </>
            }
          >
            <div class="row">
              <RowAction verb="Rotate" of={name(t)} onClick={() => rotate(t)} />
              <RowAction verb="Revoke" of={name(t)} onClick={() => revoke(t)} />
            </div>
          </ListRow>
        ))}
      </ul>
      <InlineForm
        label="Name of the new person token"
        placeholder="Script name"
        value={label}
        onValue={setLabel}
        action="Make a person token"
        busy={creating}
        onSubmit={() => void create()}
      />
    </SettingsCard>
  )
}
