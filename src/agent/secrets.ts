import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import type { SecretRecord } from '../messages/asks/secrets/service.ts'
import { secretRequest } from '../shared/canonical.ts'
import { secretDecision } from '../shared/proof.ts'
import { decryptSecret, generateKeyPair, type SecretKeyPair } from '../shared/secret-crypto.ts'
import type { AgentClient } from './client.ts'
import { CliError } from './failures.ts'
import type { Env } from './profiles.ts'
import type { ProofCheck } from './proof.ts'
import { acceptProof, warnUnsigned } from './trust.ts'
import { deadlineAfter, pollUntil, type WaitOptions } from './waiting.ts'

/**
 * Secret requests for the CLI and the MCP server: make a key pair, ask, wait, decrypt. The
 * private key never leaves this process (it is not even extractable), so the request can only
 * be completed by the process that made it.
 */
export interface PendingSecret {
  request: SecretRecord
  keys: SecretKeyPair
  /** The name as this side asked for it, and when (its clock): what a proof is checked with. */
  name: string
  asked_at: number
}

export async function askForSecret(
  client: AgentClient,
  name: string,
  description?: string,
): Promise<PendingSecret> {
  const keys = await generateKeyPair()
  const askedAt = Date.now()
  const { secret_request } = await client.requestSecret({
    name,
    description,
    public_key: keys.publicKey,
  })
  return { request: secret_request, keys, name, asked_at: askedAt }
}

/** Checks the person's signature over a ciphertext before it is opened; see `secretCheck`. */
export type SecretVerify = (
  pending: PendingSecret,
  ciphertext: string,
  proof: unknown,
) => ProofCheck

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * The ciphertext counts only with the person's passkey over it, checked with the keys pinned
 * in `profile`: the claim is rebuilt from the name asked for, the public key made here and the
 * ciphertext received. Without it a server could seal a value of its own (an attacker's npm
 * token) to this process's public key, which the server holds, and pass it off as the person's.
 */
export const secretCheck =
  (env: Env, profile: string): SecretVerify =>
  (pending, ciphertext, proof) =>
    acceptProof(env, profile, pending.request.id, proof, {
      request_hash: sha256(secretRequest(pending.name, pending.keys.publicKey)),
      answer: secretDecision(sha256(ciphertext)),
      approval: false,
      asked_at: pending.asked_at,
    })

/** What the person should see, word for word, before typing the secret into the app. */
export const fingerprintLine = (r: SecretRecord) =>
  `asked for secret "${r.name}" (${r.id}); fingerprint ${r.fingerprint}: enter it in the app only if the app shows the same fingerprint`

export type SecretOutcome =
  | { id: string; status: 'received'; value: string }
  | { id: string; status: 'cancelled' }
  | { id: string; status: 'timeout' }

/**
 * Waits for the ciphertext and decrypts it. The server hands it out once, so an answer lost in
 * transit cannot be fetched again: that is an error saying to ask again. A timeout leaves the
 * request pending (the MCP server waits again with the same key); the CLI withdraws it.
 */
export async function waitForSecret(
  client: AgentClient,
  pending: PendingSecret,
  timeoutMs: number | undefined,
  onOutage?: (line: string) => void,
  verify?: SecretVerify,
): Promise<SecretOutcome> {
  const { id } = pending.request
  const settled = await pollUntil(
    async (wait, signal) => {
      const read = await client.secret(id, wait, signal)
      return read.secret_request.status === 'pending' ? undefined : read
    },
    { deadline: deadlineAfter(timeoutMs), onOutage },
  )
  if (!settled) return { id, status: 'timeout' }
  const { status } = settled.secret_request
  if (status === 'cancelled') return { id, status }
  if (settled.ciphertext === undefined) {
    throw new CliError(`secret ${id} was delivered, but the answer was lost on the way; ask again`)
  }
  const check = verify?.(pending, settled.ciphertext, settled.proof)
  if (check && !check.ok) {
    // From the phone it looked sent: the person must learn here that it was not used.
    await warnUnsigned(client, `The secret "${pending.request.name}"`, check.reason)
    throw new CliError(`secret ${id} is not trusted (${check.reason}): it was not used`)
  }
  try {
    return {
      id,
      status: 'received',
      value: await decryptSecret(pending.keys, id, settled.ciphertext),
    }
  } catch {
    throw new CliError(`secret ${id} could not be decrypted (it was not made for this request)`)
  }
}

export interface SecretRequestOptions extends WaitOptions {
  /** Told once the request exists, before the wait: the person must see its fingerprint. */
  onAsked?: (pending: PendingSecret) => void
  /** Undefined only with `--allow-unsigned`. */
  verify?: SecretVerify
}

/** Asks for a secret, then waits for it as `waitForSecret` does. */
export async function requestSecret(
  client: AgentClient,
  name: string,
  description: string | undefined,
  options: SecretRequestOptions = {},
): Promise<{ pending: PendingSecret; outcome: SecretOutcome }> {
  const pending = await askForSecret(client, name, description)
  options.onAsked?.(pending)
  const outcome = await waitForSecret(
    client,
    pending,
    options.timeoutMs,
    options.onOutage,
    options.verify,
  )
  return { pending, outcome }
}

/**
 * Where a secret goes when the caller names no file: a fresh 0700 directory of its own, the
 * file named after the secret (made safe for a file name).
 */
export function privateSecretPath(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hark-secret-'))
  return join(dir, name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || 'secret')
}

/**
 * Writes `value` to `path` with mode 0600 whatever was there: a new file in the same directory,
 * renamed over the target, so no other mode is ever visible and a reader never sees half of it.
 */
export function writeSecretFile(path: string, value: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    writeFileSync(temp, value, { mode: 0o600, flag: 'wx' })
    renameSync(temp, path)
  } catch (error) {
    rmSync(temp, { force: true })
    throw new CliError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`)
  }
}
