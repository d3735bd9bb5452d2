import { cose, decodeCredentialPublicKey } from '@simplewebauthn/server/helpers'
import type { Ctx } from '../../core/context.ts'
import { base64url } from '../../shared/proof.ts'
import { relyingParty } from './ceremony.ts'
import type { PasskeyRow } from './store.ts'

/**
 * The person's passkeys as an agent pins them (PRODUCT.md "Trusted answers"): each public key
 * as a JWK (what node:crypto verifies with, no WebAuthn library needed in the agent), with the
 * relying party id and origin its assertions must name. Reported to the agent on
 * `GET /v1/channel`; the agent trusts them on first use and checks every later change itself.
 */
export interface ApproverKey {
  /** The credential id, base64url. */
  id: string
  name: string
  /** COSE algorithm: -7 ES256, -8 EdDSA, -257 RS256. */
  alg: number
  jwk: JsonWebKey
  created_at: number
}

export interface Approvers {
  rp_id: string
  origin: string
  keys: ApproverKey[]
}

const b64 = (v: unknown) => (v instanceof Uint8Array ? base64url.encode(v) : undefined)

/** A COSE public key as a JWK, or undefined for a kind the agent cannot verify. */
export function coseToJwk(
  publicKey: Uint8Array<ArrayBuffer>,
): { alg: number; jwk: JsonWebKey } | undefined {
  // Read as a plain map: the library's typed map names only the keys common to every kind.
  const key = decodeCredentialPublicKey(publicKey) as unknown as Map<number, unknown>
  const kty = key.get(cose.COSEKEYS.kty)
  const alg = key.get(cose.COSEKEYS.alg) as number
  if (kty === cose.COSEKTY.EC2 && key.get(cose.COSEKEYS.crv) === cose.COSECRV.P256) {
    const x = b64(key.get(cose.COSEKEYS.x))
    const y = b64(key.get(cose.COSEKEYS.y))
    return x && y ? { alg, jwk: { kty: 'EC', crv: 'P-256', x, y } } : undefined
  }
  if (kty === cose.COSEKTY.OKP && key.get(cose.COSEKEYS.crv) === cose.COSECRV.ED25519) {
    const x = b64(key.get(cose.COSEKEYS.x))
    return x ? { alg, jwk: { kty: 'OKP', crv: 'Ed25519', x } } : undefined
  }
  if (kty === cose.COSEKTY.RSA) {
    const n = b64(key.get(cose.COSEKEYS.n))
    const e = b64(key.get(cose.COSEKEYS.e))
    return n && e ? { alg, jwk: { kty: 'RSA', n, e } } : undefined
  }
  return undefined
}

export function approverKey(row: PasskeyRow): ApproverKey | undefined {
  const converted = coseToJwk(new Uint8Array(row.public_key))
  if (!converted) return undefined
  return { id: row.id, name: row.name, ...converted, created_at: row.created_at }
}

export async function approvers(ctx: Ctx, userId: string): Promise<Approvers> {
  const { rpID, origin } = relyingParty(ctx)
  const keys = (await ctx.store.passkeys.byUser(userId))
    .map(approverKey)
    .filter((k): k is ApproverKey => k !== undefined)
  return { rp_id: rpID, origin, keys }
}
