/**
 * End-to-end encryption of secret requests, in WebCrypto only: the CLI (Bun) and the web app
 * (the browser, through the bundle) run this same file, so both sides agree by construction.
 *
 * - The agent makes an ECDH P-256 key pair per request. The private key is non-extractable and
 *   lives only in the requesting process's memory: once it exits, any copy of the ciphertext
 *   (a WAL frame, a backup) can never be opened.
 * - The request carries the public key as base64url of its raw (uncompressed, 65-byte) point.
 * - The fingerprint (SHA-256 of those 65 bytes, first 8 bytes as 4 groups of 4 hex) is what
 *   the person compares between the agent's terminal and the app: a server that swapped the
 *   key would show a different one. The app computes it from the key it encrypts to, never
 *   from what a message claims.
 * - The app encrypts with a fresh ephemeral key pair: ECDH → HKDF-SHA-256 (salt: both public
 *   keys; info: the request id, so a ciphertext cannot be replayed into another request) →
 *   AES-256-GCM. The envelope is `v1.<ephemeral public key>.<iv>.<ciphertext>`, base64url.
 */

const CURVE = { name: 'ECDH', namedCurve: 'P-256' } as const
const VERSION = 'v1'
const te = new TextEncoder()

/** Raw P-256 public keys are 65 bytes: 0x04, X, Y. Base64url without padding: 87 characters. */
export const PUBLIC_KEY_CHARS = 87
const IV_BYTES = 12
/** The largest secret accepted, in bytes of UTF-8: a key file or certificate fits. */
export const MAX_SECRET_BYTES = 64 * 1024
/** The longest envelope a secret of `MAX_SECRET_BYTES` makes (GCM adds a 16-byte tag). */
export const MAX_CIPHERTEXT_CHARS =
  VERSION.length + 3 + PUBLIC_KEY_CHARS + 16 + Math.ceil(((MAX_SECRET_BYTES + 16) * 4) / 3)

const B64URL = '[A-Za-z0-9_-]'
/** The envelope's shape; the server checks it (it cannot check more without the key). */
export const CIPHERTEXT_PATTERN = new RegExp(
  `^${VERSION}\\.${B64URL}{${PUBLIC_KEY_CHARS}}\\.${B64URL}{16}\\.${B64URL}{22,}$`,
)
export const PUBLIC_KEY_PATTERN = new RegExp(`^${B64URL}{${PUBLIC_KEY_CHARS}}$`)

export function toBase64url(bytes: Uint8Array): string {
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

export function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/')
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

export interface SecretKeyPair {
  /** Base64url of the raw public key: what the request carries. */
  publicKey: string
  /** Never leaves this process: non-extractable. */
  privateKey: CryptoKey
}

export async function generateKeyPair(): Promise<SecretKeyPair> {
  const pair = (await crypto.subtle.generateKey(CURVE, false, ['deriveBits'])) as CryptoKeyPair
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey))
  return { publicKey: toBase64url(raw), privateKey: pair.privateKey }
}

/**
 * Imports a public key, proving it is a point on P-256 (WebCrypto refuses anything else).
 * Throws on a key that is not one.
 */
export async function importPublicKey(publicKey: string): Promise<CryptoKey> {
  if (!PUBLIC_KEY_PATTERN.test(publicKey)) throw new Error('not a base64url P-256 public key')
  const raw = fromBase64url(publicKey)
  if (raw[0] !== 4) throw new Error('not an uncompressed P-256 public key')
  return crypto.subtle.importKey('raw', raw, CURVE, true, [])
}

/** `3f9a 1c0b 77de 0412`: the first 8 bytes of SHA-256 of the raw public key. */
export async function fingerprint(publicKey: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', fromBase64url(publicKey)))
  const hex = [...digest.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join('')
  return hex.match(/.{4}/g)?.join(' ') ?? hex
}

async function aesKey(
  privateKey: CryptoKey,
  peer: CryptoKey,
  salt: Uint8Array<ArrayBuffer>,
  requestId: string,
  usage: 'encrypt' | 'decrypt',
): Promise<CryptoKey> {
  const shared = await crypto.subtle.deriveBits({ name: 'ECDH', public: peer }, privateKey, 256)
  const hkdf = await crypto.subtle.importKey('raw', shared, 'HKDF', false, ['deriveKey'])
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt, info: te.encode(`hark secret ${VERSION} ${requestId}`) },
    hkdf,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  )
}

/** Salt = ephemeral public key ‖ recipient public key: the key is bound to both. */
function saltOf(ephemeral: Uint8Array, recipient: Uint8Array): Uint8Array<ArrayBuffer> {
  const salt = new Uint8Array(ephemeral.length + recipient.length)
  salt.set(ephemeral)
  salt.set(recipient, ephemeral.length)
  return salt
}

/** The person's side: encrypts `secret` to the request's public key. */
export async function encryptSecret(
  publicKey: string,
  requestId: string,
  secret: string,
): Promise<string> {
  const plaintext = te.encode(secret)
  if (plaintext.length > MAX_SECRET_BYTES) {
    throw new Error(`the secret is ${plaintext.length} bytes; the limit is ${MAX_SECRET_BYTES}`)
  }
  const recipient = await importPublicKey(publicKey)
  const eph = (await crypto.subtle.generateKey(CURVE, true, ['deriveBits'])) as CryptoKeyPair
  const ephRaw = new Uint8Array(await crypto.subtle.exportKey('raw', eph.publicKey))
  const salt = saltOf(ephRaw, fromBase64url(publicKey))
  const key = await aesKey(eph.privateKey, recipient, salt, requestId, 'encrypt')
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES))
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, plaintext),
  )
  return [VERSION, toBase64url(ephRaw), toBase64url(iv), toBase64url(sealed)].join('.')
}

/** The agent's side: opens an envelope with the request's private key. Throws if tampered. */
export async function decryptSecret(
  keys: SecretKeyPair,
  requestId: string,
  envelope: string,
): Promise<string> {
  if (!CIPHERTEXT_PATTERN.test(envelope)) throw new Error('not a secret envelope')
  const [, ephText, ivText, sealedText] = envelope.split('.') as [string, string, string, string]
  const ephemeral = await importPublicKey(ephText)
  const salt = saltOf(fromBase64url(ephText), fromBase64url(keys.publicKey))
  const key = await aesKey(keys.privateKey, ephemeral, salt, requestId, 'decrypt')
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: fromBase64url(ivText) },
    key,
    fromBase64url(sealedText),
  )
  return new TextDecoder('utf-8', { fatal: true }).decode(plain)
}
