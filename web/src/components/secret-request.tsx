import { useEffect, useState } from 'preact/hooks'
import { encryptSecret, fingerprint } from '../../../src/shared/secret-crypto.ts'
import { errorText } from '../lib/api.ts'
import * as client from '../lib/client.ts'
import { signSecret } from '../lib/signing.ts'
import type { Block, SecretRecord } from '../lib/types.ts'
import { Button, ErrorNote } from './ui.tsx'

/**
 * A `secret_request` block: the agent asks for a secret that only it can decrypt. The secret is
 * encrypted here, in the browser, to the request's public key; only ciphertext is sent. The
 * fingerprint shown is computed here from that same key — not read from the message — so what
 * the person compares with the agent's terminal is the key their secret is really sealed to.
 */

const OUTCOME: Record<Exclude<SecretRecord['status'], 'pending'>, string> = {
  fulfilled: 'Sent, encrypted. Waiting for the agent to pick it up.',
  delivered: 'Delivered to the agent. The server no longer holds it.',
  cancelled: 'Cancelled by the agent.',
}

export function SecretRequest({ block }: { block: Block }) {
  const id = typeof block.request_id === 'string' ? block.request_id : ''
  const [record, setRecord] = useState<SecretRecord | null>(null)
  const [print, setPrint] = useState<string | null>(null)
  const [value, setValue] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const canEncrypt = typeof crypto !== 'undefined' && !!crypto.subtle

  // The message's block carries the status, so a change in the feed fetches the record again.
  useEffect(() => {
    let live = true
    client
      .secretRequest(id)
      .then(async (found) => {
        const computed = canEncrypt ? await fingerprint(found.public_key) : null
        if (!live) return
        setRecord(found)
        setPrint(computed)
      })
      .catch((e) => live && setError(errorText(e)))
    return () => {
      live = false
    }
  }, [id, block.status, canEncrypt])

  const send = async (e: Event) => {
    e.preventDefault()
    if (!record || value === '') return
    setBusy(true)
    setError(null)
    try {
      const ciphertext = await encryptSecret(record.public_key, record.id, value)
      // Signed by the person's passkey in the same tap: the agent takes no ciphertext unsigned.
      const proof = await signSecret(record, ciphertext)
      const fulfilled = await client.fulfilSecret(record.id, ciphertext, proof)
      setValue('')
      setRecord(fulfilled)
    } catch (err) {
      setError(errorText(err))
    } finally {
      setBusy(false)
    }
  }

  const name = record?.name ?? (typeof block.name === 'string' ? block.name : 'a secret')
  const status = record?.status ?? 'pending'
  return (
    <section class="b-secret" aria-label={`Secret request: ${name}`} data-status={status}>
      <p class="b-secret-head">
        The agent asks for <strong>{name}</strong>
      </p>
      {print && (
        <p class="b-secret-print">
          Fingerprint <code>{print}</code>
          <span class="field-hint">
            Send only if the agent's terminal shows the same fingerprint.
          </span>
        </p>
      )}
      {!canEncrypt ? (
        <p class="error-note">This page cannot encrypt: open the app over HTTPS.</p>
      ) : status === 'pending' ? (
        record && (
          <form class="b-secret-form" onSubmit={send}>
            <label class="field">
              <span class="field-label">Secret</span>
              <input
                type="password"
                autocomplete="off"
                spellcheck={false}
                value={value}
                onInput={(e) => setValue(e.currentTarget.value)}
              />
            </label>
            <Button type="submit" variant="primary" busy={busy} disabled={value === ''}>
              Encrypt and send
            </Button>
          </form>
        )
      ) : (
        <p class={`q-outcome ${status === 'cancelled' ? 'cancelled' : 'answered'}`}>
          {OUTCOME[status]}
        </p>
      )}
      <ErrorNote error={error} />
    </section>
  )
}
