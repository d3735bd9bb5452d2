import { type CborValue, encodeCbor } from './cbor.ts'

/**
 * A software passkey: what a platform authenticator and the browser together hand the
 * server, built by hand from WebCrypto (ECDSA P-256 / ES256), so the server's WebAuthn checks
 * run against real signatures. One instance holds one discoverable credential.
 *
 * Every field a test may want to get wrong can be overridden per ceremony: the origin the
 * "browser" reports, the rpID the "authenticator" hashes, the UV flag, the counter.
 */

const FLAG_UP = 0x01
const FLAG_UV = 0x04
const FLAG_AT = 0x40

export interface Tamper {
  /** The origin written into clientDataJSON (default: the authenticator's origin). */
  origin?: string
  /** The rpID whose SHA-256 opens authenticatorData (default: the options' rp id). */
  rpId?: string
  /** User verification done (default true). */
  uv?: boolean
  /** The signature counter to report (default: the next one). */
  counter?: number
}

export const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
const sha256 = async (data: Uint8Array<ArrayBuffer>) =>
  new Uint8Array(await crypto.subtle.digest('SHA-256', data))

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

function bigEndian32(n: number): Uint8Array {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, n)
  return out
}

/** WebCrypto signs ECDSA as raw r||s; WebAuthn wants the ASN.1 DER `SEQUENCE { r, s }`. */
export function rawToDer(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let i = 0
    while (i < bytes.length - 1 && bytes[i] === 0) i++
    let v = bytes.slice(i)
    if ((v[0] as number) & 0x80) v = concat(new Uint8Array([0]), v)
    return concat(new Uint8Array([0x02, v.length]), v)
  }
  const half = raw.length / 2
  const body = concat(integer(raw.slice(0, half)), integer(raw.slice(half)))
  return concat(new Uint8Array([0x30, body.length]), body)
}

interface CreationOptions {
  challenge: string
  rp: { id?: string; name: string }
  user: { id: string; name: string; displayName: string }
  excludeCredentials?: { id: string }[]
  authenticatorSelection?: { residentKey?: string; userVerification?: string }
}

interface RequestOptions {
  challenge: string
  rpId?: string
}

export class SoftwareAuthenticator {
  readonly credentialId = crypto.getRandomValues(new Uint8Array(32))
  counter = 0
  private keys?: CryptoKeyPair
  private userHandle?: string
  private rpId?: string

  /** @param origin what the browser reports as the page's origin. */
  constructor(readonly origin: string) {}

  get id(): string {
    return b64url(this.credentialId)
  }

  private clientData(type: string, challenge: string, tamper: Tamper): Uint8Array<ArrayBuffer> {
    return new TextEncoder().encode(
      JSON.stringify({ type, challenge, origin: tamper.origin ?? this.origin, crossOrigin: false }),
    )
  }

  private async authData(rpId: string, flags: number, counter: number, attested?: Uint8Array) {
    const parts: Uint8Array[] = [
      await sha256(new TextEncoder().encode(rpId)),
      new Uint8Array([flags]),
    ]
    parts.push(bigEndian32(counter))
    if (attested) parts.push(attested)
    return concat(...parts)
  }

  /** The COSE_Key of the public key: kty EC2, alg ES256, crv P-256, x, y. */
  private async coseKey(): Promise<Uint8Array> {
    const keys = this.keys as CryptoKeyPair
    const raw = new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey))
    return encodeCbor(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, raw.slice(1, 33)],
        [-3, raw.slice(33, 65)],
      ]),
    )
  }

  /** `navigator.credentials.create()`: a new key pair and a "none" attestation. */
  async register(options: CreationOptions, tamper: Tamper = {}) {
    if (options.excludeCredentials?.some((c) => c.id === this.id)) {
      throw new Error('InvalidStateError: this authenticator is already registered')
    }
    this.keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ])
    this.rpId = options.rp.id as string
    this.userHandle = options.user.id
    this.counter = tamper.counter ?? 0
    const id = this.credentialId
    const attested = concat(
      new Uint8Array(16), // AAGUID: zero, as for "none" attestation
      new Uint8Array([id.length >> 8, id.length & 0xff]),
      id,
      await this.coseKey(),
    )
    const flags = FLAG_UP | (tamper.uv === false ? 0 : FLAG_UV) | FLAG_AT
    const authData = await this.authData(tamper.rpId ?? this.rpId, flags, this.counter, attested)
    const attestationObject = encodeCbor(
      new Map<string, CborValue>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    )
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge, tamper)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }

  /** `navigator.credentials.get()`: signs authData || SHA-256(clientDataJSON). */
  async login(options: RequestOptions, tamper: Tamper = {}) {
    if (!this.keys || !this.rpId) throw new Error('NotAllowedError: no credential for this site')
    if (options.rpId !== undefined && options.rpId !== this.rpId) {
      throw new Error('NotAllowedError: no credential for this rpId')
    }
    this.counter = tamper.counter ?? this.counter + 1
    const flags = FLAG_UP | (tamper.uv === false ? 0 : FLAG_UV)
    const authData = await this.authData(tamper.rpId ?? this.rpId, flags, this.counter)
    const clientData = this.clientData('webauthn.get', options.challenge, tamper)
    const signed = concat(authData, await sha256(clientData))
    const raw = new Uint8Array(
      await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, this.keys.privateKey, signed),
    )
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(rawToDer(raw)),
        userHandle: this.userHandle as string,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }
}
