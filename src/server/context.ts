import type { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { KeyedWrites } from '../access/idempotency/keys.ts'
import { idempotencyStore } from '../access/idempotency/store.ts'
import { ServerKeys } from '../access/keys/keyring.ts'
import { serverKeyStore } from '../access/keys/store.ts'
import { createLimits, type Limits } from '../access/limits.ts'
import { challengeStore, passkeyStore } from '../access/passkeys/store.ts'
import { sessionStore } from '../access/sessions/store.ts'
import { AgentAuthCache } from '../access/tokens/auth-cache.ts'
import { tokenStore } from '../access/tokens/store.ts'
import { channelStore } from '../channels/store.ts'
import { type Clock, systemClock } from '../core/clock.ts'
import type { Config } from '../core/config.ts'
import type { AsyncStores, Ctx, HarkEvent } from '../core/context.ts'
import { HeldPolls, MAX_HELD_POLLS } from '../core/holds.ts'
import { type Logger, stderrLogger } from '../core/log.ts'
import type { Mailer } from '../core/mailer.ts'
import { Waiters } from '../core/waiters.ts'
import type { WritePath } from '../core/write-path.ts'
import { asyncStores } from '../db/async-stores.ts'
import { databasePath, openDatabase } from '../db/database.ts'
import { directWrites } from '../db/direct-writes.ts'
import { GroupCommit } from '../db/group-commit.ts'
import type { BlobStore } from '../files/blobs.ts'
import { DiskBlobs } from '../files/disk-blobs.ts'
import { S3Blobs } from '../files/s3-blobs.ts'
import { parseS3Url } from '../files/s3-url.ts'
import { sweepFiles } from '../files/service.ts'
import { fileStore } from '../files/store.ts'
import { auditStore } from '../messages/asks/audit/store.ts'
import { ExpiryScheduler } from '../messages/asks/expiry.ts'
import { policyStore } from '../messages/asks/policies/store.ts'
import { secretStore } from '../messages/asks/secrets/store.ts'
import { SharedPages } from '../messages/feed.ts'
import { searchIndexer, searchStore } from '../messages/search/store.ts'
import { messageStore } from '../messages/store.ts'
import { emailCodeStore } from '../people/enrol/email/store.ts'
import { joinLinkStore } from '../people/enrol/join-store.ts'
import { signInLinkStore } from '../people/enrol/sign-in-store.ts'
import { pairingStore } from '../people/enrol/store.ts'
import { settingsStore } from '../people/settings-store.ts'
import { inviteStore, userStore } from '../people/store.ts'
import type { Resolver } from '../push/endpoint.ts'
import { pushStore } from '../push/store.ts'
import { PushWorker } from '../push/worker.ts'
import { prepareDataDir } from './data-dir.ts'
import { ServerMetrics } from './metrics.ts'
import { react } from './reactions.ts'

/** A context on the embedded SQLite database (every test's, `hark serve` by default). */
export interface SqliteCtx extends Ctx {
  db: Database
}

/** Every store on SQLite, as `ctx.store` holds them (their Postgres twins: server/pg/stores.ts). */
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
    signInLinks: signInLinkStore(db),
    push: pushStore(db),
    secrets: secretStore(db),
    audit: auditStore(db),
    idempotency: idempotencyStore(db),
    search: searchStore(db),
    serverKeys: serverKeyStore(db),
    policies: policyStore(db),
  }
}

/**
 * The kernel's `Stores` (core/context.ts) is what the server opens: named here, where every
 * domain's store is known, so neither the kernel nor a domain names another domain's store.
 */
declare module '../core/context.ts' {
  interface Stores extends OpenedStores {}
}
type OpenedStores = ReturnType<typeof openStores>

/**
 * What the people service needs, over `db` outside the server (`hark admin`, provisioning in
 * tests and benchmarks): the async stores and a direct write path over them.
 */
export function directProvisioning(db: Database, clock: Clock = systemClock) {
  const store = asyncStores(openStores(db))
  return { db, store, writes: directWrites(db, store, searchIndexer(db)), clock }
}

/**
 * The blob store the configuration names. Not checked here (`check()` is async and belongs to
 * `hark serve`'s start, before it listens); the URL was validated when the settings were read.
 */
export function openBlobs(config: Config, filesDir: string): BlobStore {
  return config.s3Url ? new S3Blobs(parseS3Url(config.s3Url)) : new DiskBlobs(filesDir)
}

export interface ContextOptions {
  clock?: Clock
  log?: Logger
  mailer?: Mailer
  blobs?: BlobStore
  /** DNS lookups of push endpoints, checked and then used (default: the system's). */
  resolve?: Resolver
}

/** What an engine hands the rest of the context: SQLite's here, Postgres' in db/pg/context.ts. */
export interface Engine {
  database: Ctx['database']
  store: AsyncStores
  writes: WritePath<AsyncStores, HarkEvent>
  waiters: Waiters
  /** Limits kept where every instance sees them (Postgres); default: in this process. */
  limits?: Limits
  push?: PushWorker
}

/**
 * Says in the log when a holder's oldest poll is ended early by the bound of held polls, at
 * most once a minute (with how many since): an operator (or a benchmark holding thousands of
 * polls on one token) sees why answers came back empty before their wait.
 */
function boundLogger(config: Config, clock: Clock, log: Logger): (holder: string) => void {
  let next = 0
  let ended = 0
  return (holder) => {
    ended++
    const now = clock.now()
    if (now < next) return
    next = now + 60_000
    log.warn(
      `${holder} holds ${config.maxHeldPolls ?? MAX_HELD_POLLS} long-polls (--max-held-polls): ` +
        `its oldest was answered early, empty (${ended} so ended since the last such line)`,
    )
    ended = 0
  }
}

/** The context around an engine's stores and write path; nothing started yet. */
export function assembleContext(config: Config, options: ContextOptions, engine: Engine): Ctx {
  const clock = options.clock ?? systemClock
  const log = options.log ?? stderrLogger
  const filesDir = join(config.dataDir, 'files')
  mkdirSync(filesDir, { recursive: true, mode: 0o700 })
  const { database, store, writes, waiters } = engine
  return {
    config,
    database,
    clock,
    log,
    waiters,
    writes,
    metrics: new ServerMetrics(),
    holds: new HeldPolls(config.maxHeldPolls ?? MAX_HELD_POLLS, boundLogger(config, clock, log)),
    limits: engine.limits ?? createLimits(config, () => clock.now()),
    keys: new ServerKeys(store.serverKeys, writes, clock, log),
    idempotency: new KeyedWrites(),
    feedPages: new SharedPages(),
    expiry: new ExpiryScheduler(),
    filesDir,
    blobs: options.blobs ?? openBlobs(config, filesDir),
    filesSwept: Promise.resolve(),
    store,
    mailer: options.mailer,
    push: engine.push ?? new PushWorker(config.dataDir, undefined, options.resolve),
  }
}

/**
 * Starts what runs beside the requests: the orphan sweep (`sweep`, default: every key no record
 * names), this period's server keys, question expiry, the push worker. Everything it wrote is
 * committed before the first request.
 */
export async function startContext(
  ctx: Ctx,
  sweep: (ctx: Ctx) => Promise<void> = sweepFiles,
): Promise<void> {
  // Before anything is written: starting may settle questions that expired while down.
  react(ctx)
  ctx.filesSwept = sweep(ctx).catch((error) => {
    // Orphans cost only space: a sweep that failed (S3 down a moment) is retried next start.
    ctx.log.error(`sweeping orphan files in ${ctx.blobs.where} failed: ${error}`)
  })
  // This period's keys exist (made here, or by an instance that started first) before a request.
  await ctx.keys.start()
  await ctx.expiry.start(ctx)
  await ctx.push.start(ctx)
  // What starting wrote (questions that expired while down, leases let go) is on disk before
  // the first request, and the file is free for another connection.
  await ctx.writes.flush()
}

/** The context on the embedded SQLite database in the data directory (the default). */
export async function createContext(
  config: Config,
  options: ContextOptions = {},
): Promise<SqliteCtx> {
  prepareDataDir(config.dataDir, options.log ?? stderrLogger)
  const db = openDatabase(databasePath(config.dataDir))
  // Each unit runs in a savepoint, and SQLite keeps the pages a savepoint could have to restore
  // in a sub-journal: at 64 KiB (a send touches ~12 pages the batch already changed) that spills
  // to a temporary file and stays one for the rest of the batch, ~13 pwrite64 calls per send
  // under wrk (issue 32). In memory it is truncated at each release. Set after the migrations,
  // whose index builds may sort more than memory should hold.
  db.run('PRAGMA temp_store = MEMORY')
  const waiters = new Waiters()
  // One connection: a unit's stores and everyone else's are the same (no routing needed).
  // The agent tokens checked lately (issue 32): this process is the one writer here, so its
  // stores' writes to tokens, channels and people empty it (auth-cache.ts).
  const dataVersion = db.query<{ data_version: number }, []>('PRAGMA data_version')
  const authCache = new AgentAuthCache({
    version: () => dataVersion.get()?.data_version ?? 0,
    inTransaction: () => db.inTransaction,
  })
  const stores = openStores(db)
  const store = asyncStores({
    ...stores,
    tokens: authCache.wrap(stores.tokens),
    channels: authCache.wrap(stores.channels),
    users: authCache.wrap(stores.users),
  })
  // New messages are indexed for search once per batch, just before its COMMIT (migration
  // 018); notes another process left unindexed are indexed now, before anything is served.
  const indexNoted = searchIndexer(db)
  db.transaction(indexNoted)()
  const writes = new GroupCommit(
    db,
    waiters,
    options.log ?? stderrLogger,
    store,
    undefined,
    indexNoted,
  )
  const database = { shared: false, close: () => db.close() }
  const ctx: SqliteCtx = {
    ...assembleContext(config, options, { database, store, writes, waiters }),
    authCache,
    db,
  }
  await startContext(ctx)
  return ctx
}

/** Settles every long-poll, stops timers and closes the database. */
export async function closeContext(ctx: Ctx): Promise<void> {
  ctx.push.stop()
  ctx.expiry.stop()
  ctx.keys.stop()
  ctx.waiters.close()
  // Sends the stop cut short go back to the queue before the write path closes.
  await ctx.push.drained()
  await ctx.writes.close()
  await ctx.database.close()
}
