import { Type as t } from '@sinclair/typebox'
import { MAX_CIPHERTEXT_CHARS, PUBLIC_KEY_CHARS } from '../../../shared/secret-crypto.ts'
import { AnswerProof } from '../../schema.ts'

/** What the agent asks for: a name the person recognises, and the key only it can open with. */
export const CreateSecretRequest = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100, description: 'e.g. GITHUB_TOKEN' }),
    description: t.Optional(t.String({ maxLength: 2000 })),
    public_key: t.String({
      maxLength: PUBLIC_KEY_CHARS,
      description: 'base64url of the raw (uncompressed) ECDH P-256 public key',
    }),
  },
  { $id: 'CreateSecretRequest', additionalProperties: false },
)

export const FulfilRequest = t.Object(
  {
    ciphertext: t.String({
      maxLength: MAX_CIPHERTEXT_CHARS,
      description:
        '`v1.<ephemeral key>.<iv>.<AES-GCM ciphertext>`, base64url (src/secrets/crypto.ts)',
    }),
    // The person's passkey over SHA-256 of the ciphertext (src/shared/proof.ts secretDecision).
    proof: t.Optional(AnswerProof),
  },
  { $id: 'FulfilRequest', additionalProperties: false },
)

export const SecretStatus = t.Union(
  [t.Literal('pending'), t.Literal('fulfilled'), t.Literal('delivered'), t.Literal('cancelled')],
  { $id: 'SecretStatus' },
)

export const SecretRequest = t.Object(
  {
    id: t.String(),
    channel_id: t.String(),
    message_id: t.String({ description: 'the thread message that shows the request' }),
    name: t.String(),
    description: t.Optional(t.String()),
    public_key: t.String(),
    fingerprint: t.String({ description: 'first 8 bytes of SHA-256 of the raw public key, hex' }),
    status: SecretStatus,
    created_at: t.Integer(),
    updated_at: t.Integer(),
  },
  { $id: 'SecretRequest' },
)

export const SecretResponse = t.Object(
  {
    secret_request: SecretRequest,
    ciphertext: t.Optional(t.String({ description: 'once, when it is delivered' })),
    // The person's passkey over SHA-256 of the ciphertext (src/shared/proof.ts secretDecision).
    proof: t.Optional(AnswerProof),
  },
  { $id: 'SecretResponse' },
)

export const SecretQuery = t.Object({
  wait: t.Optional(t.String({ description: 'seconds to hold the request, at most 55' })),
})
