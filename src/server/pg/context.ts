import { SQL } from 'bun'
import { createLimits } from '../../access/limits.ts'
import { systemClock } from '../../core/clock.ts'
import type { Config } from '../../core/config.ts'
import type { Ctx } from '../../core/context.ts'
import { FatalError } from '../../core/errors.ts'
import { stderrLogger } from '../../core/log.ts'
import { Waiters } from '../../core/waiters.ts'
import { routedStores } from '../../db/async-stores.ts'
import { connectPostgres } from '../../db/pg/connect.ts'
import { migratePostgres } from '../../db/pg/migrate.ts'
import { parsePostgresUrl } from '../../db/pg/url.ts'
import { WakeBus } from '../../db/pg/wake-bus.ts'
import { PgWritePath } from '../../db/pg/write-path.ts'
import { sweepFiles } from '../../files/service.ts'
import { VapidHolder } from '../../push/vapid.ts'
import { PushWorker } from '../../push/worker.ts'
import { assembleContext, type ContextOptions, startContext } from '../context.ts'
import { prepareDataDir } from '../data-dir.ts'
import { openPgStores, openPgTransaction } from './stores.ts'

/**
 * Connections in this instance's pool. A long-poll holds none (it waits on a waiter, then
 * reads); a write holds one for its transaction, so this bounds the writes in flight at once,
 * not the requests. Postgres' default max_connections (100) fits several instances.
 */
const POOL_SIZE = 16

/** Keys younger than this may be another instance's upload on its way to its record. */
export const SHARED_SWEEP_MIN_AGE_MS = 60 * 60_000

/** Only one instance sweeps at a time: the lock says which (pg_try_advisory_lock). */
export const SWEEP_LOCK = 0x68726b73

/**
 * The context on a shared Postgres database (`HARK_DATABASE_URL`, docs/scaling.md): the
 * Postgres twins of every store, the write path as one transaction per unit, wake-ups to and
 * from the other instances through the wake bus. Every step that can fail (the server down, a
 * refused login, a schema newer than this hark) fails here, before anything listens, with the
 * password never shown.
 */
export async function createPgContext(config: Config, options: ContextOptions = {}): Promise<Ctx> {
  if (!config.databaseUrl) throw new FatalError('no database URL (HARK_DATABASE_URL)')
  const log = options.log ?? stderrLogger
  prepareDataDir(config.dataDir, log)
  const location = parsePostgresUrl(config.databaseUrl)
  const sql = await connectPostgres(location, POOL_SIZE)
  let bus: WakeBus | undefined
  let vapid: VapidHolder | undefined
  try {
    const migrated = await migratePostgres(sql)
    if (migrated.applied.length > 0) {
      log.info(`database ${location.masked}: schema ${migrated.from} → ${migrated.to}`)
    }
    const waiters = new Waiters()
    // Listening before the first request: a write on another instance from then on wakes here.
    bus = await WakeBus.start({
      url: location.url,
      waiters,
      onWakeAll: (reason) =>
        log.warn(`wake-ups may have been missed (${reason}): every poll reads again`),
    })
    const writes = new PgWritePath(sql, waiters, log, { bus, stores: openPgTransaction })
    const store = routedStores(openPgStores(sql), writes)
    const shut = bus
    const database = {
      shared: true,
      close: async () => {
        await shut.close()
        await sql.close({ timeout: 5 })
      },
      wakeStats: () => shut.stats(),
    }
    const clock = options.clock ?? systemClock
    // The write limit in the database, so it holds across instances (access/shared-limit.ts).
    const limits = createLimits(config, () => clock.now(), sql)
    // The VAPID pair every instance signs pushes with, in the database (push/vapid.ts).
    vapid = await VapidHolder.fromDatabase(sql)
    const push = new PushWorker(config.dataDir, vapid, options.resolve)
    const ctx = assembleContext(config, options, {
      database,
      store,
      writes,
      waiters,
      limits,
      push,
    })
    await startContext(ctx, (c) => sweepShared(c, sql))
    log.info(`records are kept in ${location.masked}`)
    return ctx
  } catch (error) {
    vapid?.close()
    await bus?.close().catch(() => {})
    await sql.close({ timeout: 0 }).catch(() => {})
    // The database's own failures name it (Bun's messages name the host and the failure, never
    // the password); anything else (a data directory not writable) speaks for itself.
    if (!(error instanceof SQL.SQLError)) throw error
    throw new FatalError(`cannot use ${location.masked}: ${error.message}`)
  }
}

/**
 * The orphan sweep when instances share the files: in the background (uploads do not wait for
 * it, it skips what they may be writing), by one instance at a time (the others skip it), and
 * only keys older than `SHARED_SWEEP_MIN_AGE_MS`.
 */
function sweepShared(ctx: Ctx, sql: SQL): Promise<void> {
  void (async () => {
    const conn = await sql.reserve()
    let unlocked = true
    try {
      const [row] = await conn`SELECT pg_try_advisory_lock(${SWEEP_LOCK}) AS mine`
      if (!row?.mine) {
        ctx.log.info('orphan files: another instance is sweeping them; this one skips it')
        return
      }
      try {
        await sweepFiles(ctx, { minAgeMs: SHARED_SWEEP_MIN_AGE_MS })
      } finally {
        await conn`SELECT pg_advisory_unlock(${SWEEP_LOCK})`.catch(() => {
          // A connection still holding the lock must not go back to the pool (no instance
          // would sweep again until this one stops): closed, the lock goes with it.
          unlocked = false
        })
      }
    } finally {
      if (unlocked) conn.release()
      else await conn.close().catch(() => {})
    }
  })().catch((error) =>
    ctx.log.error(`sweeping orphan files in ${ctx.blobs.where} failed: ${error}`),
  )
  return Promise.resolve()
}
