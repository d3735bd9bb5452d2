import { useEffect, useState } from 'preact/hooks'
import { Form, InlineForm } from '../components/form.tsx'
import { PairingOrigin } from '../components/pending-pairings.tsx'
import { Button, ErrorNote, Field, useAction } from '../components/ui.tsx'
import { refreshChannels } from '../lib/channels.ts'
import * as client from '../lib/client.ts'
import { dropPairing } from '../lib/pairings.ts'
import type { PairedChannel, Pairing } from '../lib/types.ts'

/**
 * Approving `hark init`: the CLI shows a code (and a link with it); the person checks it is
 * the code their terminal shows and where the request came from (the machine's name, its
 * address, when), names the agent, and approves. The CLI then gets its token.
 */

export function PairApproval({ initialCode = '' }: { initialCode?: string }) {
  const [code, setCode] = useState(initialCode)
  const [pairing, setPairing] = useState<Pairing | null>(null)
  const [label, setLabel] = useState('')
  const [result, setResult] = useState<
    { kind: 'approved'; channel: PairedChannel } | { kind: 'denied' } | null
  >(null)
  const [lookUp, looking, lookError] = useAction(async (c: string) => {
    setPairing(null)
    const found = await client.pairing(c.trim())
    setPairing(found)
    setLabel(found.label ?? '')
  })
  const [approve, approving, approveError] = useAction(async () => {
    const channel = await client.approvePairing(pairing?.user_code ?? '', label.trim())
    dropPairing(pairing?.user_code ?? '')
    setResult({ kind: 'approved', channel })
    void refreshChannels()
  })
  const [deny, denying, denyError] = useAction(async () => {
    await client.denyPairing(pairing?.user_code ?? '')
    dropPairing(pairing?.user_code ?? '')
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
        <a class="btn primary" href={`/c/${encodeURIComponent(result.channel.id)}`}>
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
      <InlineForm
        label="Pairing code"
        placeholder="ABCD-EFGH"
        code
        value={code}
        onValue={setCode}
        action="Look up"
        busy={looking}
        onSubmit={() => void lookUp(code)}
        error={lookError}
      />
      {pairing && (
        <Form class="stack pairing" onSubmit={() => void approve()}>
          <p>
            Check that the agent’s terminal shows <strong class="code">{pairing.user_code}</strong>.
          </p>
          <PairingOrigin pairing={pairing} />
          <p class="muted">
            The machine’s name is what it says of itself; the address is where the request came
            from. If you did not just run <code>hark init</code> there, deny it.
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
        </Form>
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
