import { useEffect, useState } from 'preact/hooks'
import type { ApprovalAnswer } from '../../../src/shared/blocks.ts'
import { isInput } from '../../../src/shared/blocks.ts'
import { approvalRequest, questionRequest, secretRequest } from '../../../src/shared/canonical.ts'
import {
  type AnswerProof,
  base64url,
  claimOf,
  claimText,
  secretDecision,
} from '../../../src/shared/proof.ts'
import * as client from './client.ts'
import type { Message, Passkey, SecretRecord } from './types.ts'

/**
 * Signed answers (PRODUCT.md "Trusted answers"), the app's part. An answer that lets an agent
 * act is signed here, on the person's device, by one of their passkeys: a WebAuthn assertion
 * with user verification whose challenge is SHA-256 of the answer's claim (src/shared/proof.ts).
 * Before signing, the request hash is computed again from what the card shows, so the person
 * signs what they saw and never a hash the server chose. The agent checks the proof itself.
 */

const encoder = new TextEncoder()

export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)))
}

export const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

export const isApproval = (message: Message) =>
  message.body.blocks?.some((b) => b.type === 'approval') === true

/** Does this question take a signed answer? (`ask.request_hash`: approvals, or `proof: true`.) */
export const takesProof = (message: Message) => typeof message.ask?.request_hash === 'string'

/**
 * The request hash of what the app shows, as the server and the agent compute it
 * (src/messages/asks/approval.ts): an approval's tool and input, or a question's input blocks as sent.
 */
export async function shownRequestHash(message: Message): Promise<string> {
  const blocks = message.body.blocks ?? []
  const approval = blocks.find((b) => b.type === 'approval')
  const text = approval
    ? approvalRequest(approval.tool as string, approval.input)
    : questionRequest(blocks.filter((b) => isInput(b)))
  return hex(await sha256(text))
}

/** 'ok': what is shown is what the agent asked; 'changed': the server's hash is of another request. */
export type RequestCheck = 'none' | 'ok' | 'changed'

export async function checkRequest(message: Message): Promise<RequestCheck> {
  if (!takesProof(message)) return 'none'
  return (await shownRequestHash(message)) === message.ask?.request_hash ? 'ok' : 'changed'
}

/** The card's check, done as soon as it shows (the send checks again before signing). */
export function useRequestCheck(message: Message): RequestCheck | undefined {
  const [check, setCheck] = useState<RequestCheck | undefined>(undefined)
  useEffect(() => {
    let live = true
    checkRequest(message).then(
      (c) => live && setCheck(c),
      () => live && setCheck('changed'), // a body that cannot be hashed is not signed either
    )
    return () => {
      live = false
    }
  }, [message.body, message.ask?.request_hash])
  return check
}

/**
 * The person's passkeys, read once per page and shared by every card: whether there is one
 * to sign with, and which credentials the browser may offer. Settings forgets the list when a
 * passkey is added or removed.
 */
let known: Promise<Passkey[]> | undefined

export function myPasskeys(): Promise<Passkey[]> {
  if (!known) {
    known = client.passkeys()
    known.catch(() => {
      known = undefined // offline: read again next time
    })
  }
  return known
}

export function passkeysChanged(): void {
  known = undefined
}

/** The list for a card (undefined while it loads, or when it could not be read). */
export function useMyPasskeys(): Passkey[] | undefined {
  const [list, setList] = useState<Passkey[] | undefined>(undefined)
  useEffect(() => {
    let live = true
    myPasskeys().then(
      (l) => live && setList(l),
      () => {},
    )
    return () => {
      live = false
    }
  }, [])
  return list
}

/** Why an answer was not sent (or, for a deny, not signed). */
export type NotSignedKind = 'changed' | 'cancelled' | 'unsupported' | 'failed'

export class NotSigned extends Error {
  constructor(
    readonly kind: NotSignedKind,
    message: string,
  ) {
    super(message)
  }
}

/** The assertion over the claim of exactly this answer, made by one of `passkeys`. */
function sign(message: Message, answer: unknown, passkeys: Passkey[]): Promise<AnswerProof> {
  const ids = {
    channel_id: message.channel_id,
    message_id: message.id,
    request_hash: message.ask?.request_hash as string,
  }
  return assert(
    (answeredAt) => claimText(claimOf(ids, answer, answeredAt, isApproval(message))),
    message.created_at,
    passkeys,
  )
}

/**
 * One passkey prompt over the text `textAt` makes for the moment of signing (`asked`: when
 * what is answered was asked, on the server's clock): an answer's claim, or a policy's
 * (lib/policies.ts).
 */
export async function assert(
  textAt: (answeredAt: number) => string | Promise<string>,
  asked: number,
  passkeys: Passkey[],
): Promise<AnswerProof> {
  if (typeof PublicKeyCredential === 'undefined' || !navigator.credentials) {
    throw new NotSigned('unsupported', 'This browser cannot sign with a passkey.')
  }
  // The app's clock, but never before the question: a phone a little behind the server would
  // otherwise sign a time the server and the agent refuse as "before it was asked".
  const answeredAt = Math.max(Date.now(), asked)
  const challenge = await sha256(await textAt(answeredAt))
  let credential: PublicKeyCredential | null
  try {
    credential = (await navigator.credentials.get({
      publicKey: {
        challenge: challenge as BufferSource,
        rpId: location.hostname,
        userVerification: 'required',
        allowCredentials: passkeys.map((p) => ({
          type: 'public-key' as const,
          id: base64url.decode(p.id) as BufferSource,
        })),
        timeout: 120_000,
      },
    })) as PublicKeyCredential | null
  } catch (error) {
    const name = (error as Error).name
    // NotAllowedError: closed, timed out, not verified, or no passkey of theirs on this device.
    if (name === 'NotAllowedError' || name === 'AbortError') {
      throw new NotSigned('cancelled', 'The passkey prompt was closed or timed out.')
    }
    throw new NotSigned('failed', `The passkey could not sign: ${(error as Error).message}`)
  }
  if (!credential) throw new NotSigned('cancelled', 'The passkey prompt was closed.')
  const response = credential.response as AuthenticatorAssertionResponse
  const bytes = (b: ArrayBuffer) => base64url.encode(new Uint8Array(b))
  const proof: AnswerProof = {
    credential_id: bytes(credential.rawId),
    authenticator_data: bytes(response.authenticatorData),
    client_data_json: bytes(response.clientDataJSON),
    signature: bytes(response.signature),
    answered_at: answeredAt,
  }
  if (response.userHandle) proof.user_handle = bytes(response.userHandle)
  return proof
}

export interface Sent {
  message: Message
  /** Sent with a proof. */
  signed: boolean
  /** A deny that went unsigned, and why (the deny itself is safe: it never lets an agent act). */
  unsignedWhy?: NotSignedKind
}

/**
 * Answers `message`, signed when it takes proof. An answer that lets the agent act is sent
 * only signed (or, for a person with no passkey at all, unsigned: they have nothing to sign
 * with, and the card tells them what that means); when it cannot be signed, nothing is sent
 * and `NotSigned` says why. An approval's deny is signed too, but sent unsigned if it cannot be.
 */
export async function sendAnswer(message: Message, answer: unknown): Promise<Sent> {
  const unsigned = async (why?: NotSignedKind): Promise<Sent> => ({
    message: await client.answer(message.id, answer),
    signed: false,
    ...(why ? { unsignedWhy: why } : {}),
  })
  if (!takesProof(message)) return unsigned()
  const denial = isApproval(message) && (answer as ApprovalAnswer).decision === 'deny'
  if ((await checkRequest(message)) === 'changed') {
    if (denial) return unsigned('changed')
    throw new NotSigned('changed', 'This request was changed on the server; not signed.')
  }
  const passkeys = await myPasskeys()
  if (passkeys.length === 0) return unsigned()
  let proof: AnswerProof
  try {
    proof = await sign(message, answer, passkeys)
  } catch (error) {
    if (denial && error instanceof NotSigned) return unsigned(error.kind)
    throw error
  }
  return { message: await client.answer(message.id, answer, proof), signed: true }
}

/**
 * The person's passkey over a secret's ciphertext, made with the same tap that sends it: the
 * claim names this request, the name and public key the card shows, and the SHA-256 of exactly
 * this ciphertext (src/shared/proof.ts secretDecision), so the agent can tell the person's
 * ciphertext from one the server sealed to its key itself. Undefined for a person with no
 * passkey (sent unsigned; an agent that checks refuses it); `NotSigned` when the prompt failed.
 */
export async function signSecret(
  record: SecretRecord,
  ciphertext: string,
): Promise<AnswerProof | undefined> {
  const passkeys = await myPasskeys()
  if (passkeys.length === 0) return undefined
  const ids = {
    channel_id: record.channel_id,
    message_id: record.id,
    request_hash: hex(await sha256(secretRequest(record.name, record.public_key))),
  }
  const decision = secretDecision(hex(await sha256(ciphertext)))
  return assert(
    (answeredAt) => claimText({ ...ids, decision, answered_at: answeredAt }),
    record.created_at,
    passkeys,
  )
}
