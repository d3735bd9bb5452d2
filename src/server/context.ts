import type { Database } from 'bun:sqlite'
import { accessSync, constants, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Server } from 'bun'
import { ExpiryScheduler } from '../asks/expiry.ts'
import { channelStore } from '../channels/store.ts'
import { openDatabase } from '../db/database.ts'
import type { Mailer } from '../email/mailer.ts'
import { emailCodeStore } from '../email/store.ts'
import { sweepFiles } from '../files/service.ts'
import { fileStore } from '../files/store.ts'
import { joinLinkStore } from '../join/store.ts'
import { messageStore } from '../messages/store.ts'
import { pairingStore } from '../pairing/store.ts'
import { challengeStore, passkeyStore } from '../passkeys/store.ts'
import { inviteStore, tokenStore, userStore } from '../people/store.ts'
import { pushStore } from '../push/store.ts'
import { PushWorker } from '../push/worker.ts'
import { secretStore } from '../secrets/store.ts'
import { sessionStore } from '../sessions/store.ts'
import { settingsStore } from '../settings/store.ts'
import { type Clock, systemClock } from './clock.ts'
import type { Config } from './config.ts'
import { FatalError } from './errors.ts'
import { socketRequest } from './front-door.ts'
import { HeldPolls } from './holds.ts'
import { type Logger, stderrLogger } from './log.ts'
import { WriteLimiter } from './ratelimit.ts'
import { Waiters } from './waiters.ts'

/**
 * Everything the services need, built once from the configuration. Services are plain
 * functions of `(ctx, ...)`; the HTTP layer only translates requests into calls.
 */
export interface Ctx {
  config: Config
  db: Database
  clock: Clock
  log: Logger
  waiters: Waiters
  /** Long-polls held right now, by token or session (capped). */
  holds: HeldPolls
  limiter: WriteLimiter
  expiry: ExpiryScheduler
  filesDir: string
  store: ReturnType<typeof openStores>
  /** Sends queued web pushes and email reminders, off the request path. */
  push: PushWorker
  /** Sends email (login codes, notifications); absent when no SMTP server is configured. */
  mailer?: Mailer
  /** The listening server, once `hark serve` has one (tests drive `app.handle()` without). */
  server?: Server<unknown>
}

/**
 * Runs a long-poll's `poll`: counted against `holder`'s cap of polls held at once (429 past it)
 * and kept open past Bun's idle timeout. A poll that does not wait is neither.
 */
export async function longPoll<T>(
  ctx: Ctx,
  request: Request,
  holder: string,
  waitMs: number,
  poll: () => Promise<T>,
): Promise<T> {
  if (waitMs <= 0) return poll()
  const release = ctx.holds.take(holder)
  holdOpen(ctx, request, waitMs)
  try {
    return await poll()
  } finally {
    release()
  }
}

/**
 * Keeps a long-poll's connection open past Bun's idle timeout: the socket is idle while the
 * request waits, and Bun would otherwise cut it after `idleTimeout` seconds.
 */
export function holdOpen(ctx: Ctx, request: Request, waitMs: number): void {
  if (waitMs > 0) ctx.server?.timeout(socketRequest(request), Math.ceil(waitMs / 1000) + 15)
}

/**
 * Turns Bun's idle timeout off for a request whose body streams in (an upload): Bun would cut it
 * after `idleTimeout` however steadily bytes arrive; `stallGuarded` watches for stalls instead.
 */
export function streamOpen(ctx: Ctx, request: Request): void {
  ctx.server?.timeout(socketRequest(request), 0)
}

export class DataDirError extends FatalError {}

export function openStores(db: Database) {
  return {
    messages: messageStore(db),
    channels: channelStore(db),
    users: userStore(db),
    tokens: tokenStore(db),
    files: fileStore(db),
    sessions: sessionStore(db),
    settings: settingsStore(db),
    invites: inviteStore(db),
    emailCodes: emailCodeStore(db),
    passkeys: passkeyStore(db),
    challenges: challengeStore(db),
    pairings: pairingStore(db),
    joinLinks: joinLinkStore(db),
    push: pushStore(db),
    secrets: secretStore(db),
  }
}

/** Creates the data directory if needed and proves it writable, with a clear error if not. */
export function prepareDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    accessSync(dataDir, constants.W_OK | constants.R_OK)
  } catch (error) {
    throw new DataDirError(
      `data directory ${dataDir} is not writable (${(error as NodeJS.ErrnoException).code ?? error}); ` +
        'choose another with --data or HARK_DATA, or fix its owner',
    )
  }
}

export const databasePath = (dataDir: string) => join(dataDir, 'hark.db')

export function createContext(
  config: Config,
  options: { clock?: Clock; log?: Logger; mailer?: Mailer } = {},
): Ctx {
  prepareDataDir(config.dataDir)
  const db = openDatabase(databasePath(config.dataDir))
  const clock = options.clock ?? systemClock
  const filesDir = join(config.dataDir, 'files')
  mkdirSync(filesDir, { recursive: true, mode: 0o700 })
  const ctx: Ctx = {
    config,
    db,
    clock,
    log: options.log ?? stderrLogger,
    waiters: new Waiters(),
    holds: new HeldPolls(),
    limiter: new WriteLimiter(config.writeLimit, () => clock.now()),
    expiry: new ExpiryScheduler(),
    filesDir,
    store: openStores(db),
    mailer: options.mailer,
    push: new PushWorker(config.dataDir),
  }
  sweepFiles(ctx)
  ctx.expiry.start(ctx)
  ctx.push.start(ctx)
  return ctx
}

/** Settles every long-poll, stops timers and closes the database. */
export function closeContext(ctx: Ctx): void {
  ctx.push.stop()
  ctx.expiry.stop()
  ctx.waiters.close()
  ctx.db.close()
}
