import { useState } from 'preact/hooks'
import { Button, CopyText, ErrorNote, useAction } from '../components/ui.tsx'
import { del, enc, post } from '../lib/api.ts'
import { useChannels } from '../lib/channels.ts'
import { fromNow } from '../lib/format.ts'
import { useList } from './use-list.ts'

interface TokenInfo {
  id: string
  kind: 'agent' | 'person'
  label: string | null
  channel_id: string | null
  created_at: number
  last_used_at: number | null
}

/**
 * Tokens: each agent's (one per channel) and the person's own for scripts. Revoking stops a
 * token at once; rotating gives a new secret for the same purpose, shown here once.
 */
export function TokenSettings() {
  const { items, error, reload } = useList<TokenInfo>('/v1/app/tokens', 'tokens')
  const channels = useChannels()
  const [fresh, setFresh] = useState<{ label: string; token: string } | null>(null)
  const [label, setLabel] = useState('')
  const name = (t: TokenInfo) =>
    t.kind === 'agent'
      ? (channels?.find((c) => c.id === t.channel_id)?.label ?? t.label ?? 'Agent')
      : (t.label ?? 'Script')
  const [revoke, , revokeError] = useAction(async (t: TokenInfo) => {
    if (!confirm(`Revoke the token of “${name(t)}”? Whatever uses it stops working now.`)) return
    await del(`/v1/app/tokens/${enc(t.id)}`)
    await reload()
  })
  const [rotate, , rotateError] = useAction(async (t: TokenInfo) => {
    if (!confirm(`Replace the token of “${name(t)}”? The old one stops working now.`)) return
    const r = await post<{ token: string }>(`/v1/app/tokens/${enc(t.id)}/rotate`)
    setFresh({ label: name(t), token: r.token })
    await reload()
  })
  const [create, creating, createError] = useAction(async () => {
    const r = await post<{ token: string }>('/v1/app/tokens', label.trim() ? { label } : {})
    setFresh({ label: label.trim() || 'Script', token: r.token })
    setLabel('')
    await reload()
  })
  return (
    <section class="card stack" aria-labelledby="tokens">
      <h2 id="tokens">Tokens</h2>
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
          <li key={t.id}>
            <div>
              <strong>{name(t)}</strong>
              <span class="muted">
                {t.kind === 'agent' ? 'Agent' : 'Person (scripts)'} · made {fromNow(t.created_at)}
                {t.last_used_at ? ` · used ${fromNow(t.last_used_at)}` : ' · never used'}
              </span>
            </div>
            <div class="row">
              <Button variant="quiet" onClick={() => rotate(t)} aria-label={`Rotate ${name(t)}`}>
                Rotate
              </Button>
              <Button variant="quiet" onClick={() => revoke(t)} aria-label={`Revoke ${name(t)}`}>
                Revoke
              </Button>
            </div>
          </li>
        ))}
      </ul>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault()
          void create()
        }}
      >
        <input
          type="text"
          aria-label="Name of the new person token"
          placeholder="Script name"
          value={label}
          onInput={(e) => setLabel(e.currentTarget.value)}
        />
        <Button type="submit" busy={creating}>
          Make a person token
        </Button>
      </form>
    </section>
  )
}
