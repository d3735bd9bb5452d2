import { createCipheriv, createDecipheriv } from 'node:crypto'

/**
 * A sign-up ceremony's data holds the setup token or an invite's secret between its options
 * and its verification. It is sealed (AES-256-GCM) under a key that lives only in this
 * process's memory, so neither sits readable in the database, its WAL or a backup. A restart
 * voids the ceremonies in flight (five minutes at most): the browser asks for new options.
 */
const KEY = crypto.getRandomValues(new Uint8Array(32))

/** `iv.tag.ciphertext`, bound to `context` (the challenge's id and purpose). */
export function seal(context: string, data: unknown): string {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const cipher = createCipheriv('aes-256-gcm', KEY, iv).setAAD(Buffer.from(context))
  const body = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()])
  return [Buffer.from(iv), cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.')
}

/** The sealed value, or undefined when another process sealed it (or it was tampered with). */
export function unseal<T>(context: string, sealed: string): T | undefined {
  const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'))
  if (!iv || !tag || !body) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', KEY, iv).setAAD(Buffer.from(context))
    decipher.setAuthTag(tag)
    return JSON.parse(Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8'))
  } catch {
    return undefined
  }
}
