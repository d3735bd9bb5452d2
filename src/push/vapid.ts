import {
  chmodSync,
  linkSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import webpush from 'web-push'
import { randomBase62 } from '../core/ids.ts'

/**
 * The server's VAPID key pair: it signs every push (push services tie a subscription to the
 * public key it was made with), so it is made once, at first start, and kept in the data
 * directory, readable by the server's user only. Rotating it voids every subscription.
 */
export interface VapidKeys {
  publicKey: string
  privateKey: string
  created_at: number
}

export const vapidFile = (dataDir: string) => join(dataDir, 'vapid.json')

const generate = (): VapidKeys => ({ ...webpush.generateVAPIDKeys(), created_at: Date.now() })

/** Writes the keys to a 0600 temporary file beside the real one; returns its path. */
function writeTemp(dataDir: string, keys: VapidKeys): string {
  const temp = join(dataDir, `.vapid-${randomBase62(8)}.tmp`)
  writeFileSync(temp, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(temp, 0o600) // the umask cannot widen it, but an odd one could narrow the owner's bits
  return temp
}

/**
 * The keys, made on first use. Creation links the finished file into place, which fails if
 * it exists: the server and an admin command starting together still agree on one pair.
 */
export function loadOrCreateVapid(dataDir: string): VapidKeys {
  const file = vapidFile(dataDir)
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as VapidKeys
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const temp = writeTemp(dataDir, generate())
  try {
    linkSync(temp, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    rmSync(temp, { force: true })
  }
  return JSON.parse(readFileSync(file, 'utf8')) as VapidKeys
}

/** `hark admin vapid rotate`: a new pair replaces the old one atomically. */
export function rotateVapid(dataDir: string): VapidKeys {
  const keys = generate()
  renameSync(writeTemp(dataDir, keys), vapidFile(dataDir))
  return keys
}

/**
 * The keys as the running server sees them: re-read when the file changes, so a rotation by
 * the admin command (while the server runs) takes effect without a restart.
 */
export class VapidHolder {
  private keys: VapidKeys
  private stamp: string
  private headers = new Map<string, { value: string; until: number }>()

  constructor(private readonly dataDir: string) {
    this.keys = loadOrCreateVapid(dataDir)
    this.stamp = this.fileStamp()
  }

  private fileStamp(): string {
    try {
      const s = statSync(vapidFile(this.dataDir))
      return `${s.mtimeMs}:${s.size}:${s.ino}`
    } catch {
      return ''
    }
  }

  current(): VapidKeys {
    const stamp = this.fileStamp()
    if (stamp !== this.stamp) {
      this.keys = loadOrCreateVapid(this.dataDir)
      this.stamp = this.fileStamp()
      this.headers.clear()
    }
    return this.keys
  }

  /**
   * The `Authorization` header for one push service. Signing a JWT per push is wasted work;
   * one is valid 12 hours, so it is reused for an hour per push service (the audience).
   */
  authorization(endpoint: string, subject: string, now = Date.now()): string {
    const keys = this.current()
    const audience = new URL(endpoint).origin
    const cached = this.headers.get(audience)
    if (cached && cached.until > now) return cached.value
    const { Authorization } = webpush.getVapidHeaders(
      audience,
      subject,
      keys.publicKey,
      keys.privateKey,
      'aes128gcm',
      Math.floor(now / 1000) + 12 * 3600,
    )
    this.headers.set(audience, { value: Authorization, until: now + 3600_000 })
    return Authorization
  }
}
