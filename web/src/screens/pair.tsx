import { useEffect, useState } from 'preact/hooks'
import { Button, ErrorNote, Field, useAction } from '../components/ui.tsx'
import { enc, get, post } from '../lib/api.ts'
import { refreshChannels } from '../lib/channels.ts'

/**
 * Approving `hark init`: the CLI shows a code (and a link with it); the person checks it is
 * the code their terminal shows, names the agent, and approves. The CLI then gets its token.
 */
interface Pairing {
  user_code: string
  label: string | null
  expires_at: number
}

export function PairApproval({ initialCode = '' }: { initialCode?: string }) {
  const [code, setCode] = useState(initialCode)
  const [pairing, setPairing] = useState<Pairing | null>(null)
  const [label, setLabel] = useState('')
  const [result, setResult] = useState<
    { kind: 'approved'; channel: { id: string; label: string } } | { kind: 'denied' } | null
  >(null)
  const [lookUp, looking, lookError] = useAction(async (c: string) => {
    setPairing(null)
    const r = await get<{ pairing: Pairing }>(`/v1/app/pairings/${enc(c.trim())}`)
    setPairing(r.pairing)
    setLabel(r.pairing.label ?? '')
  })
  const [approve, approving, approveError] = useAction(async () => {
    const r = await post<{ channel: { id: string; label: string } }>(
      `/v1/app/pairings/${enc(pairing?.user_code ?? '')}/approve`,
      label.trim() ? { label: label.trim() } : {},
    )
    setResult({ kind: 'approved', channel: r.channel })
    void refreshChannels()
  })
  const [deny, denying, denyError] = useAction(async () => {
    await post(`/v1/app/pairings/${enc(pairing?.user_code ?? '')}/deny`)
    setResult({ kind: 'denied' })
  })

  // A link from the CLI carries the code: look it up at once.
  useEffect(() => {
    if (initialCode) void lookUp(initialCode)
  }, [initialCode])

  if (result?.kind === 'approved') {
    return (
      <div class="stack" role="status">
        <p>
          Approved. <strong>{result.channel.label}</strong> is connected; its terminal carries on by
          itself.
        </p>
        <a class="btn primary" href={`/c/${enc(result.channel.id)}`}>
          Open {result.channel.label}
        </a>
      </div>
    )
  }
  if (result?.kind === 'denied') {
    return <p role="status">Denied. That agent gets no token.</p>
  }
  return (
    <div class="stack">
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault()
          void lookUp(code)
        }}
      >
        <input
          type="text"
          aria-label="Pairing code"
          placeholder="ABCD-EFGH"
          autocapitalize="characters"
          autocomplete="off"
          value={code}
          onInput={(e) => setCode(e.currentTarget.value)}
        />
        <Button type="submit" busy={looking}>
          Look up
        </Button>
      </form>
      <ErrorNote error={lookError} />
      {pairing && (
        <form
          class="stack pairing"
          onSubmit={(e) => {
            e.preventDefault()
            void approve()
          }}
        >
          <p>
            Check that the agent’s terminal shows <strong class="code">{pairing.user_code}</strong>.
          </p>
          <Field label="Name this agent">
            <input
              type="text"
              required
              value={label}
              placeholder="Agent"
              onInput={(e) => setLabel(e.currentTarget.value)}
            />
          </Field>
          <div class="row">
            <Button type="submit" variant="primary" busy={approving}>
              Approve
            </Button>
            <Button variant="danger" busy={denying} onClick={() => deny()}>
              Deny
            </Button>
          </div>
          <ErrorNote error={approveError ?? denyError} />
        </form>
      )}
    </div>
  )
}

export function Pair({ code }: { code: string }) {
  return (
    <main class="page">
      <h1>Connect an agent</h1>
      <div class="card">
        <PairApproval initialCode={code} />
      </div>
      <p>
        <a href="/">Back to your agents</a>
      </p>
    </main>
  )
}
