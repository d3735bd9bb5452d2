import type { ChannelRow } from '../../channels/store.ts'
import type { TokenRow } from './store.ts'

/** An agent token found good, with its channel: what the agent guard hands a route. */
export interface CachedAgent {
  token: TokenRow
  channel: ChannelRow
}

/** The state of the records a lookup started from: it may be kept only if still current. */
export interface AuthMark {
  epoch: number
  version: number
}

/** What the cache needs of the database it sits over (SQLite's one connection). */
export interface AuthSource {
  /**
   * `PRAGMA data_version`: changes when another connection (a `hark admin` process) commits,
   * never with this connection's own commits.
   */
  version(): number
  /** A transaction is open on this connection: its writes are not committed yet. */
  inTransaction(): boolean
}

/** The stores whose writes can change what an agent's token authorizes. */
export const AUTH_TABLES = ['tokens', 'channels', 'users'] as const

/** Their operations that only read: every other operation invalidates the cache. */
const READS: ReadonlySet<string> = new Set([
  'byHash',
  'withChannel',
  'byId',
  'liveByUser',
  'byUser',
  'lastRid',
  'unread',
  'byEmail',
  'hasOwner',
  'all',
])

/**
 * The agent tokens checked lately, by their hash, with their channels (issue 32: the two reads
 * were ~45-60 µs of a send under load). Used on SQLite only, where this process is the one
 * writer: every write to tokens, channels or people through the stores (a revoke, a channel
 * deleted or renamed, a person removed, a token's use recorded) empties it at once (`wrap`), and
 * a commit by another process (`hark admin`) shows as a new `data_version`, which no entry
 * matches. Nothing is kept while a write to those tables is still uncommitted (it may be rolled
 * back: the cache must never hold what the database does not), and only good agent tokens are
 * kept: a refusal is looked up again each time. Postgres (other instances write too) has none.
 */
export class AgentAuthCache {
  private epoch = 0
  /** A write to the auth tables happened in a transaction that may still be open. */
  private pendingWrite = false
  private readonly entries = new Map<string, CachedAgent & AuthMark>()

  constructor(
    private readonly source: AuthSource,
    private readonly max = 10_000,
  ) {}

  /** A write to tokens, channels or people: nothing remembered may be trusted. */
  invalidate(): void {
    this.epoch++
    this.pendingWrite = true
    this.entries.clear()
  }

  /** Taken before a lookup: its result is kept only if nothing changed meanwhile. */
  mark(): AuthMark {
    return { epoch: this.epoch, version: this.source.version() }
  }

  get(key: string, mark: AuthMark): CachedAgent | undefined {
    const found = this.entries.get(key)
    if (!found || found.epoch !== mark.epoch || found.version !== mark.version) return undefined
    return found
  }

  set(key: string, agent: CachedAgent, mark: AuthMark): void {
    if (mark.epoch !== this.epoch || !this.settled()) return
    if (this.entries.size >= this.max) this.entries.clear()
    this.entries.set(key, { ...agent, ...mark })
  }

  /** No write to the auth tables is waiting on a transaction that may yet roll back. */
  private settled(): boolean {
    if (this.pendingWrite && !this.source.inTransaction()) this.pendingWrite = false
    return !this.pendingWrite
  }

  /** `store` (one of AUTH_TABLES) with every operation but its reads invalidating this cache. */
  wrap<T extends object>(store: T): T {
    const out: Record<string, unknown> = {}
    for (const [op, fn] of Object.entries(store)) {
      if (typeof fn !== 'function' || READS.has(op)) {
        out[op] = fn
        continue
      }
      out[op] = (...args: unknown[]) => {
        this.invalidate()
        return (fn as (...a: unknown[]) => unknown)(...args)
      }
    }
    return out as T
  }
}

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../../core/context.ts' {
  interface Ctx {
    /** The agent tokens checked lately (SQLite only: there, this process is the one writer). */
    authCache?: AgentAuthCache
  }
}
