import type { Server } from 'bun'
import type { Clock } from './clock.ts'
import type { Config } from './config.ts'
import type { HeldPolls } from './holds.ts'
import type { Logger } from './log.ts'
import type { Mailer } from './mailer.ts'
import type { Waiters } from './waiters.ts'
import type { WritePath, WriteTx } from './write-path.ts'

/**
 * What the services are handed: `Ctx` and `Tx` as types only, so a domain names them without
 * importing the server (which builds the real context, server/context.ts) and this kernel
 * names no domain. What a domain owns is added by module augmentation: its long-lived parts (a
 * worker, a cache) to `Ctx`, beside their class; every store to `Stores`, by the assembly that
 * opens them (server/context.ts). Nothing here exists at run time.
 */

/**
 * Every event a unit may emit (core/events.ts), each domain's under a name of its own: a domain
 * adds its events here by module augmentation beside their types (messages/events.ts,
 * messages/asks/events.ts); who reacts to each is the assembly's (server/reactions.ts).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation in the domains
export interface Events {}

/** Any event a unit may emit. */
export type HarkEvent = Events[keyof Events]

/**
 * Every store, synchronous (SQLite's), by the name `ctx.store` gives it. Empty here: the server,
 * which opens them all (`openStores`), fills it (`declare module '../core/context.ts'`).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation in server/context.ts
export interface Stores {}

/**
 * A store's operations as the services call them: each answers a promise of its value, so one
 * service runs on either engine (issue 20): SQLite's stores through `asyncStores`, Postgres'
 * twins (db/pg/) natively.
 */
export type AsyncStore<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never
}

/** Every store, async, by the name `ctx.store` gives it. */
export type AsyncStores = { [K in keyof Stores]: AsyncStore<Stores[K]> }

/** Cross-instance wake-ups so far (Postgres' wake bus, db/pg/wake-bus.ts), for `/metrics`. */
export interface WakeBusStats {
  /** Notifications this instance sent (inside transactions: a rolled-back one counts too). */
  sent: number
  /** Other instances' notifications received (each may carry many keys). */
  received: number
  /** This instance's own notifications received back and skipped (its write path woke them). */
  own: number
  /** Times the listening connection came back after a drop. */
  reconnects: number
  /** Self-checks done, and those whose ping did not come back in time. */
  checks: number
  missedChecks: number
  /** Ping timeouts waited out because other notifications were still arriving. */
  lateChecks: number
  /** Times every local waiter was woken by the safety net. */
  wakeAlls: number
}

/**
 * Everything the services need, built once from the configuration (server/context.ts). Services
 * are plain functions of `(ctx, ...)`; the HTTP layer only translates requests into calls. The
 * domains add their parts (limits, keys, the push worker, ...) by module augmentation.
 */
export interface Ctx {
  config: Config
  /** The records' engine: closed last, after the write path (SQLite's file, or a pool). */
  database: {
    /**
     * Other instances may share these records (Postgres): run-once work must be claimed in
     * the database, not assumed to be this process's alone (push leases, expiry, sweeps).
     */
    shared: boolean
    close(): void | Promise<void>
    /** Cross-instance wake-ups so far, for `/metrics` (Postgres). */
    wakeStats?(): WakeBusStats
  }
  clock: Clock
  log: Logger
  waiters: Waiters
  /** The one way anything is written: units batched into group commits (core/write-path.ts). */
  writes: WritePath<AsyncStores, HarkEvent>
  /** Long-polls held right now, by token or session (capped). */
  holds: HeldPolls
  /**
   * Every store, async (db/async-stores.ts): reads outside units; a unit uses `tx.store`. The
   * synchronous stores (`openStores`) are used only behind `asyncStores`, in server/context.ts
   * and in `directProvisioning` (`hark admin`, tests, benchmarks).
   */
  store: AsyncStores
  /** Sends email (login codes, notifications); absent when no SMTP server is configured. */
  mailer?: Mailer
  /** The listening server, once `hark serve` has one (tests drive `app.handle()` without). */
  server?: Server<unknown>
  /** When Hark serves HTTPS itself: the end of the certificate served now (ms), for /metrics. */
  tlsNotAfter?: () => number | undefined
}

/** What a unit of the server's write path gets: its stores (`tx.store`), wakes, effects, events. */
export type Tx = WriteTx<AsyncStores, HarkEvent>
