import { useRef, useState } from 'preact/hooks'
import { ApiError, errorText } from './api.ts'
import { NotSigned, sendAnswer, takesProof, useMyPasskeys, useRequestCheck } from './signing.ts'
import type { Message } from './types.ts'

/**
 * Sending one answer, signed where the question takes proof (signing.ts), for both the approval
 * card and other questions: one send however fast the taps, and the state a card shows while it
 * goes (busy, an error, why an answer was not signed and not sent). `closed` is what to say when
 * the question closed meanwhile (409).
 */
export function useSignedSend(message: Message, onAnswered: (m: Message) => void, closed: string) {
  const passkeys = useMyPasskeys()
  const check = useRequestCheck(message)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  /** Why the last answer was not sent (the passkey did not sign, or the request changed). */
  const [notSent, setNotSent] = useState<NotSigned | null>(null)
  const sending = useRef(false)

  /** Sends `answer`; resolves to why it was not signed (and so not sent), if that happened. */
  const send = async (answer: unknown): Promise<NotSigned | undefined> => {
    if (sending.current) return undefined
    sending.current = true
    setBusy(true)
    setError(null)
    setNotSent(null)
    try {
      onAnswered((await sendAnswer(message, answer)).message)
      return undefined
    } catch (e) {
      sending.current = false
      if (e instanceof NotSigned) {
        setNotSent(e)
        return e
      }
      setError(e instanceof ApiError && e.status === 409 ? closed : errorText(e))
      return undefined
    } finally {
      setBusy(false)
    }
  }

  return {
    passkeys,
    check,
    busy,
    error,
    notSent,
    send,
    /** Set once an answer is on its way: nothing is sent twice (unset when the send failed). */
    sending,
    signs: takesProof(message) && (passkeys?.length ?? 0) > 0,
    changed: check === 'changed' || notSent?.kind === 'changed',
  }
}
