import { type Static, Type as t } from '@sinclair/typebox'
import { listResponse, wrappedResponse } from '../../core/docs.ts'
import { LABEL_MAX_CHARS } from '../../core/labels.ts'

/**
 * What the browser's `navigator.credentials.create()/get()` gave, as JSON (the shape
 * `@simplewebauthn/browser` and `PublicKeyCredential.toJSON()` produce). Only the envelope is
 * checked here; the WebAuthn verification checks the rest and names `response` when it fails.
 */
const open = { additionalProperties: true }

export const RegistrationCredential = t.Object(
  {
    id: t.String({ minLength: 1 }),
    rawId: t.String({ minLength: 1 }),
    type: t.Literal('public-key'),
    response: t.Object(
      { clientDataJSON: t.String(), attestationObject: t.String() },
      { ...open, description: 'AuthenticatorAttestationResponse, base64url fields' },
    ),
    clientExtensionResults: t.Optional(t.Object({}, open)),
    authenticatorAttachment: t.Optional(t.String()),
  },
  { ...open, $id: 'RegistrationCredential' },
)

export const AuthenticationCredential = t.Object(
  {
    id: t.String({ minLength: 1 }),
    rawId: t.String({ minLength: 1 }),
    type: t.Literal('public-key'),
    response: t.Object(
      {
        clientDataJSON: t.String(),
        authenticatorData: t.String(),
        signature: t.String(),
        userHandle: t.Optional(t.String()),
      },
      { ...open, description: 'AuthenticatorAssertionResponse, base64url fields' },
    ),
    clientExtensionResults: t.Optional(t.Object({}, open)),
    authenticatorAttachment: t.Optional(t.String()),
  },
  { ...open, $id: 'AuthenticationCredential' },
)

const PasskeyName = t.String({
  description: `the passkey's name as the person sees it, 1 to ${LABEL_MAX_CHARS} characters`,
})

export const SignUpOptionsRequest = t.Object(
  {
    email: t.String(),
    name: t.Optional(t.String({ description: "the person's name" })),
    setup_token: t.Optional(t.String({ description: 'first run: the token from the setup link' })),
    invite: t.Optional(t.String({ description: "an invite's secret" })),
  },
  { $id: 'SignUpOptionsRequest' },
)

export const SignInLinkOptionsRequest = t.Object(
  { code: t.String({ description: "the secret in a sign-in link's fragment (/enrol#CODE)" }) },
  { $id: 'SignInLinkOptionsRequest' },
)

export const RegisterVerifyRequest = t.Object(
  {
    challenge_id: t.String(),
    response: RegistrationCredential,
    name: t.Optional(PasskeyName),
  },
  { $id: 'RegisterVerifyRequest' },
)

export const LoginOptionsRequest = t.Object({})

export const LoginVerifyRequest = t.Object(
  {
    challenge_id: t.String(),
    response: AuthenticationCredential,
  },
  { $id: 'LoginVerifyRequest' },
)

export const RenamePasskeyRequest = t.Object({ name: PasskeyName }, { $id: 'RenamePasskeyRequest' })

export const PasskeyParams = t.Object({ id: t.String() })

export const CeremonyOptions = t.Object(
  {
    challenge_id: t.String({ description: 'send it back with the response' }),
    options: t.Object(
      {},
      { ...open, description: 'pass to navigator.credentials.create() or .get() (JSON form)' },
    ),
  },
  { $id: 'CeremonyOptions' },
)

export const Passkey = t.Object(
  {
    id: t.String({ description: 'the credential id, base64url' }),
    name: t.String(),
    created_at: t.Integer(),
    last_used_at: t.Union([t.Integer(), t.Null()]),
    device_type: t.Union([t.String(), t.Null()], { description: 'singleDevice or multiDevice' }),
    backed_up: t.Boolean({ description: 'synced by a passkey provider (iCloud, Google...)' }),
    fingerprint: t.Union([t.String(), t.Null()], {
      description:
        'what `hark keys` shows for this passkey (8 groups of 4 hex); null for a key kind agents cannot check',
    }),
  },
  { $id: 'Passkey' },
)
export type Passkey = Static<typeof Passkey>

export const PasskeyResponse = wrappedResponse('PasskeyResponse', 'passkey', Passkey)
export const PasskeysResponse = listResponse('PasskeysResponse', 'passkeys', Passkey)

/** The person's passkeys as an agent pins them (keys.ts): JWKs, with the rp id and origin. */
export const Approvers = t.Object(
  {
    rp_id: t.String(),
    origin: t.String(),
    keys: t.Array(
      t.Object({
        id: t.String({ description: 'the credential id, base64url' }),
        name: t.String(),
        alg: t.Integer({ description: 'COSE algorithm: -7 ES256, -8 EdDSA, -257 RS256' }),
        jwk: t.Record(t.String(), t.String()),
        created_at: t.Integer(),
      }),
    ),
  },
  { $id: 'Approvers' },
)
