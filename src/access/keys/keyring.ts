import { createCipheriv, createDecipheriv } from 'node:crypto'
import type { Clock } from '../../core/clock.ts'
import type { AsyncStore } from '../../core/context.ts'
import type { Logger } from '../../core/log.ts'
import type { WritePath } from '../../core/write-path.ts'
import type { ServerKeyStore } from './store.ts'

/**
 * The server's secret keys (docs/decisions.md, "Server keys"). They live in the database, so
 * every instance on it holds the same ones and a restart keeps them: a passkey ceremony or an
 * email code begun on one instance ends on any other. They rotate: the keys of a period (a UTC
 * day) seal during that period and open during the next, then are erased, so a copy of the
 * database opens only what was sealed in its last two days, and a backup (which leaves the keys
 * out) opens nothing at all.
 *
 * Nothing is cached: every use reads its key (a primary-key lookup on a table of a few rows), so
 * an instance never holds a key the database does not (a unit that made one and was rolled back)
 * nor misses one another instance made.
 */

/** One key per use, so no key serves two algorithms or two parts of the product. */
export const KEY_PURPOSES = [
  /** AES-256-GCM: a passkey ceremony's data (setup token, invite) between options and verify. */
  'ceremony',
  /** HMAC-SHA-256: email code hashes and the tag of the address that asked for a code. */
  'email-code',
  /** AES-256-GCM: what an email code carries (a sign-up's setup token, invite, name). */
  'email-data',
] as const
export type KeyPurpose = (typeof KEY_PURPOSES)[number]

/** A key seals for one period and opens for one more: values that live minutes, kept a day. */
export const KEY_PERIOD_MS = 24 * 60 * 60 * 1000
/** Besides at start, how often retired keys are looked for (and erased) on an idle server. */
const ROTATE_EVERY_MS = 60 * 60 * 1000

/** `PERIOD.iv.tag.ciphertext`; the period names the key (its id). */
const SEALED = /^(\d{1,12})\.([\w-]{16})\.([\w-]{22})\.([\w-]*)$/

/** The period a sealed value names, or undefined when it is not a sealed value. */
export function periodOf(sealed: string): number | undefined {
  const m = SEALED.exec(sealed)
  return m ? Number(m[1]) : undefined
}

// The key id and purpose are authenticated with the context: a value moved to another purpose,
// or relabelled with another period, fails like a tampered one.
const aad = (period: number, purpose: KeyPurpose, context: string) =>
  Buffer.from(`${period}\n${purpose}\n${context}`)

/** The keys of one period. */
export class KeySet {
  constructor(
    readonly period: number,
    private readonly keys: ReadonlyMap<string, Uint8Array>,
  ) {}

  key(purpose: KeyPurpose): Uint8Array {
    const key = this.keys.get(purpose)
    if (!key) throw new Error(`no ${purpose} key for period ${this.period}`)
    return key
  }

  /**
   * Encrypts `data` (as JSON) with AES-256-GCM under this period's `purpose` key, bound to
   * `context` (what the value belongs to: a challenge's id, a code's address). A fresh random
   * 96-bit IV each time: a key seals at most a day's ceremonies and codes, which the rate
   * limits hold far below the 2^32 values one key may seal with random IVs.
   */
  seal(purpose: KeyPurpose, context: string, data: unknown): string {
    const iv = crypto.getRandomValues(new Uint8Array(12))
    const cipher = createCipheriv('aes-256-gcm', this.key(purpose), iv)
    cipher.setAAD(aad(this.period, purpose, context))
    const body = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()])
    const parts = [Buffer.from(iv), cipher.getAuthTag(), body].map((b) => b.toString('base64url'))
    return [this.period, ...parts].join('.')
  }

  /** The sealed value, or undefined when it was sealed in another period or tampered with. */
  open<T>(purpose: KeyPurpose, context: string, sealed: string): T | undefined {
    const m = SEALED.exec(sealed)
    if (!m || Number(m[1]) !== this.period) return undefined
    const [iv, tag, body] = m.slice(2).map((part) => Buffer.from(part, 'base64url'))
    if (!iv || !tag || !body) return undefined
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key(purpose), iv)
      decipher.setAAD(aad(this.period, purpose, context)).setAuthTag(tag)
      return JSON.parse(Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8'))
    } catch {
      return undefined
    }
  }
}

export class ServerKeys {
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly store: AsyncStore<ServerKeyStore>,
    private readonly writes: WritePath,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** The period `ms` falls in: UTC days, so every instance agrees without asking another. */
  periodAt(ms = this.clock.now()): number {
    return Math.floor(ms / KEY_PERIOD_MS)
  }

  /**
   * The keys that seal now, the current period's. The first use in a period makes them: each
   * purpose's key is added unless another instance added it first, and read back, so all use
   * the one that won. Inside a write unit this joins the unit (rolled back with it, if it is).
   */
  async current(): Promise<KeySet> {
    const period = this.periodAt()
    const found = await this.store.ofPeriod(period)
    if (KEY_PURPOSES.every((p) => found.has(p))) return new KeySet(period, found)
    return await this.writes.apply(async () => {
      const now = this.clock.now()
      for (const purpose of KEY_PURPOSES) {
        await this.store.add(purpose, period, crypto.getRandomValues(new Uint8Array(32)), now)
      }
      await this.eraseRetired(period)
      return new KeySet(period, await this.store.ofPeriod(period))
    })
  }

  /**
   * The keys of `period` if they may still open: this period's or the one before (and the next,
   * for an instance whose clock runs a little behind another's at midnight). Never made here.
   */
  async opening(period: number): Promise<KeySet | undefined> {
    const now = this.periodAt()
    if (!Number.isSafeInteger(period) || period < now - 1 || period > now + 1) return undefined
    const found = await this.store.ofPeriod(period)
    return KEY_PURPOSES.every((p) => found.has(p)) ? new KeySet(period, found) : undefined
  }

  /** The keys that open `sealed`: those of the period it names, if they still open. */
  async of(sealed: string): Promise<KeySet | undefined> {
    const period = periodOf(sealed)
    return period === undefined ? undefined : await this.opening(period)
  }

  /** `sealed` opened with the keys of its period; undefined when retired, foreign or tampered. */
  async open<T>(purpose: KeyPurpose, context: string, sealed: string): Promise<T | undefined> {
    return (await this.of(sealed))?.open<T>(purpose, context, sealed)
  }

  /** Makes this period's keys if needed and erases retired ones: at start, then every hour. */
  async rotate(): Promise<KeySet> {
    const keys = await this.current()
    const oldest = await this.store.oldest()
    if (oldest !== undefined && oldest < keys.period - 1) {
      await this.writes.apply(async () => this.eraseRetired(keys.period))
    }
    return keys
  }

  async start(): Promise<void> {
    await this.rotate()
    this.timer = setInterval(async () => {
      try {
        await this.rotate()
      } catch (error) {
        // A busy or full disk: the keys are refused when too old to open anyway; next hour.
        this.log.error(`rotating the server keys failed: ${error}`)
      }
    }, ROTATE_EVERY_MS)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  private async eraseRetired(period: number): Promise<void> {
    const erased = await this.store.eraseBefore(period - 1)
    if (erased > 0) this.log.info(`server keys: ${erased} retired keys erased`)
  }
}

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../../core/context.ts' {
  interface Ctx {
    /**
     * The secret keys that seal ceremonies and key email codes: in the database, shared by every
     * instance on it, rotated daily (access/keys/keyring.ts).
     */
    keys: ServerKeys
  }
}
