import type { Database } from 'bun:sqlite'
import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  openSync,
  statSync,
} from 'node:fs'
import { HarkError } from '../../core/errors.ts'
import type { Logger } from '../../core/log.ts'
import type { Waiters } from '../../core/waiters.ts'
import type { WritePath, WriteTx } from '../../core/write-path.ts'

/**
 * The write path on SQLite: group commit (docs/decisions.md, "Group commit").
 *
 * The first unit of a moment opens one immediate transaction; every unit runs in a savepoint of
 * it, so one that throws is rolled back alone. The transaction commits at the end of the event
 * loop's turn (`setImmediate`: the requests that arrived together have all run by then; a lone
 * write waits for no timer). The commit itself does not wait for the disk (`synchronous =
 * NORMAL` for that one statement): the write-ahead log is flushed afterwards with one
 * `fdatasync` on the thread pool, and while it runs the next batches fill and commit. When the
 * flush returns, every batch committed before it began is durable: its waiters are woken, its
 * effects run and its units resolve, in order. So one flush serves everything that arrived
 * while the previous one ran, and the server keeps working meanwhile.
 *
 * Writes that bypass this path (a migration, `hark admin`, another process) commit with the
 * connection's own `synchronous = FULL`, durable by themselves.
 */
export class GroupCommit implements WritePath {
  /** The batch being filled: its transaction is open. */
  private open: Batch | undefined
  /** Committed batches waiting for the next flush. */
  private committed: Batch[] = []
  /** Batches whose flush is running. */
  private flushing: Batch[] = []
  /** The unit running now, which a nested `apply` joins. */
  private current: UnitEffects | undefined
  private closed = false
  /** `flush` is committing: it syncs the log itself, on this thread. */
  private syncing = false
  /** A turn-by-turn wait for a quiet turn before the next flush is under way. */
  private gathering = false
  /** When the last unit ran (performance.now()). */
  private lastWrite = Number.NEGATIVE_INFINITY
  /** Set once a flush failed: what was committed may not be on disk, so nothing more is taken. */
  private broken: Error | undefined
  private wal: { fd: number; ino: number } | undefined
  /** Flushes (fdatasync calls, and lone writes' own syncs) made, for tests and benchmarks. */
  flushes = 0
  /** Units committed (each batch's count once it is durable). */
  private written = 0

  constructor(
    private readonly db: Database,
    private readonly waiters: Waiters,
    private readonly log: Logger,
    /** How long without a write before the next commits alone (tests set Infinity: never). */
    private readonly quietMs = QUIET_MS,
  ) {
    // A checkpoint copies each page of the log into the database once, however many commits
    // changed it, and costs two syncs on this thread: a longer log (16 MB instead of 4) is
    // checkpointed a quarter as often, for far fewer page writes where a batch touches index
    // pages all over (bench/fsyncs.ts).
    db.run(`PRAGMA wal_autocheckpoint = ${CHECKPOINT_PAGES}`)
  }

  run<T>(unit: (tx: WriteTx) => T): Promise<T> {
    let value: T
    try {
      value = this.apply(unit)
    } catch (error) {
      return Promise.reject(error)
    }
    // The unit's batch is the newest one (inside an outer unit, the outer one's): durable
    // together. A unit that committed alone is durable already.
    const pending = this.settled()
    return pending ? pending.then(() => value) : Promise.resolve(value)
  }

  apply<T>(unit: (tx: WriteTx) => T): T {
    if (this.current) return this.savepoint(unit, this.current)
    if (this.broken) throw storageFailed()
    if (this.closed) throw new HarkError(503, 'the server is shutting down; try again shortly')
    if (!this.open && this.db.inTransaction) {
      // Someone holds a transaction of their own on this connection: its commit would decide
      // this unit's fate and the flush would not cover it. Every write goes through this path.
      throw new Error('a write-path unit ran inside a transaction opened outside the write path')
    }
    const quiet = this.quiet()
    this.lastWrite = performance.now()
    if (quiet) return this.alone(unit)
    const batch = this.open ?? this.begin()
    const tx = new UnitEffects()
    this.current = tx
    try {
      const value = this.savepoint(unit, tx)
      batch.take(tx)
      return value
    } finally {
      this.current = undefined
    }
  }

  /**
   * Nothing written for a while and nothing under way: a write now is most likely alone, and
   * committing it on the spot (SQLite syncing the log itself, as before group commit) answers
   * it without waiting a turn of the event loop and a trip to the thread pool. The next write
   * within `QUIET_MS` is batched.
   */
  private quiet(): boolean {
    return (
      !this.open &&
      !this.gathering &&
      this.committed.length === 0 &&
      this.flushing.length === 0 &&
      performance.now() - this.lastWrite > this.quietMs
    )
  }

  /** A unit in a transaction of its own, durable when it returns; then its wakes and effects. */
  private alone<T>(unit: (tx: WriteTx) => T): T {
    const tx = new UnitEffects()
    this.current = tx
    let value: T
    try {
      value = this.db.transaction(() => unit(tx)).immediate()
    } finally {
      this.current = undefined
    }
    this.flushes++
    const batch = new Batch()
    batch.take(tx)
    this.durable([batch])
    return value
  }

  stats(): { writes: number; flushes: number } {
    return { writes: this.written, flushes: this.flushes }
  }

  settled(): Promise<void> | undefined {
    const last = this.open ?? this.committed.at(-1) ?? this.flushing.at(-1)
    return last?.durable
  }

  close(): void {
    if (this.closed) return
    this.flush()
    this.closed = true
    this.closeWal()
  }

  flush(): void {
    if (this.closed) return
    this.syncing = true
    try {
      this.commitOpen()
    } finally {
      this.syncing = false
    }
    const waiting = [...this.flushing, ...this.committed]
    this.flushing = []
    this.committed = []
    if (waiting.length === 0) return
    try {
      this.syncWal(true)
    } catch (error) {
      this.flushFailed(waiting, error)
      return
    }
    this.durable(waiting)
  }

  /** Runs `unit` in a savepoint (bun:sqlite nests a transaction inside an open one). */
  private savepoint<T>(unit: (tx: WriteTx) => T, tx: UnitEffects): T {
    return this.db.transaction(() => unit(tx)).immediate()
  }

  private begin(): Batch {
    // The safety level cannot change inside a transaction: set here, restored after the commit.
    this.db.run('PRAGMA synchronous = NORMAL')
    try {
      this.db.run('BEGIN IMMEDIATE')
    } catch (error) {
      this.db.run('PRAGMA synchronous = FULL')
      throw error
    }
    const batch = new Batch()
    this.open = batch
    setImmediate(() => this.commitOpen())
    return batch
  }

  private commitOpen(): void {
    const batch = this.open
    if (!batch) return
    this.open = undefined
    try {
      this.db.run('COMMIT')
    } catch (error) {
      // Nothing of the batch is kept: every unit in it fails, none half-written.
      if (this.db.inTransaction) this.db.run('ROLLBACK')
      this.log.error(`committing ${batch.units} writes failed: ${error}`)
      batch.fail(storageFailed())
      return
    } finally {
      this.db.run('PRAGMA synchronous = FULL')
    }
    // Flushed even when every unit failed: a write that bypassed the path may have joined it.
    this.committed.push(batch)
    if (!this.syncing) this.flushWhenQuiet()
  }

  /**
   * Starts the flush at the end of the first turn of the event loop that brought no new write
   * (or once `MAX_GATHER_MS` have passed since the oldest commit waiting): under load, every
   * write that is being worked on joins the flush; at rest, a lone write waits one turn (µs).
   */
  private flushWhenQuiet(): void {
    if (this.gathering) return
    this.gathering = true
    const started = performance.now()
    let quietTurns = 0
    const check = () => {
      quietTurns = this.open === undefined ? quietTurns + 1 : 0
      this.commitOpen()
      if (quietTurns < QUIET_TURNS && performance.now() - started < MAX_GATHER_MS && !this.closed) {
        setImmediate(check)
        return
      }
      this.gathering = false
      this.startFlush()
    }
    setImmediate(check)
  }

  /** Starts a flush of every committed batch, unless one runs (it starts the next when done). */
  private startFlush(): void {
    if (this.flushing.length > 0 || this.committed.length === 0 || this.closed) return
    const batches = this.committed
    this.committed = []
    let fd: number
    try {
      fd = this.syncWal(false)
    } catch (error) {
      this.flushFailed(batches, error)
      return
    }
    this.flushing = batches
    fdatasync(fd, (error) => {
      if (this.flushing !== batches) return // closed meanwhile: close() made them durable
      this.flushing = []
      if (error) {
        this.flushFailed(batches, error)
        return
      }
      this.durable(batches)
      this.startFlush()
    })
  }

  /** The batches are on disk: wake once per key, run effects, resolve, all in order. */
  private durable(batches: Batch[]): void {
    // Acknowledging is activity too: the writers it answers send again at once, and their
    // next writes are batched, not taken for a quiet spell's lone write.
    this.lastWrite = performance.now()
    const keys = new Set<string>()
    for (const batch of batches) for (const key of batch.wakes) keys.add(key)
    if (keys.size > 0) this.waiters.wake(...keys)
    for (const batch of batches) {
      this.written += batch.units
      for (const effect of batch.effects) {
        try {
          effect()
        } catch (error) {
          this.log.error(`after a write: ${error}`)
        }
      }
      batch.settle()
    }
  }

  /**
   * A flush that fails leaves committed data of unknown durability (and a retried fsync may
   * report success for pages the kernel dropped): like PostgreSQL, Hark does not carry on.
   * Every write waiting and every later one fails with 503 until the server is restarted.
   */
  private flushFailed(batches: Batch[], error: unknown): void {
    this.broken = error instanceof Error ? error : new Error(String(error))
    this.log.error(`flushing the database to disk failed (${error}); restart hark`)
    for (const batch of [...batches, ...this.committed]) batch.fail(storageFailed())
    this.committed = []
  }

  /**
   * The write-ahead log's descriptor, opened once and again if SQLite made a new file; with
   * `now`, flushed on this thread. Answers the descriptor to flush.
   */
  private syncWal(now: boolean): number {
    const path = journalOf(this.db.filename)
    const ino = statSync(path).ino
    if (this.wal?.ino !== ino) {
      this.closeWal()
      const fd = openSync(path, 'r+')
      this.wal = { fd, ino: fstatSync(fd).ino }
    }
    this.flushes++
    if (now) fdatasyncSync(this.wal.fd)
    return this.wal.fd
  }

  private closeWal(): void {
    if (this.wal) closeSync(this.wal.fd)
    this.wal = undefined
  }
}

/**
 * The longest a committed write waits for others to share its flush. Only reached under a
 * steady stream of writes; it bounds the latency gathering adds.
 */
const MAX_GATHER_MS = 2

/** Turns without a new write that end the gathering. */
const QUIET_TURNS = 2

/** Pages of write-ahead log that trigger a checkpoint (SQLite's default is 1,000). */
const CHECKPOINT_PAGES = 4000

/** How long without a write before the next one commits alone (see `quiet`). */
const QUIET_MS = 1

/**
 * The file a commit lands in: the write-ahead log, or the database itself where SQLite could
 * not use one (a file system without shared memory falls back to a rollback journal).
 */
function journalOf(database: string): string {
  const wal = `${database}-wal`
  return existsSync(wal) ? wal : database
}

const storageFailed = () =>
  new HarkError(503, 'the database could not store this write; nothing was saved, try again')

/** What one unit asked for besides its writes. */
class UnitEffects implements WriteTx {
  wakes: string[] = []
  effects: (() => void)[] = []

  wake(...keys: string[]): void {
    this.wakes.push(...keys)
  }

  after(effect: () => void): void {
    this.effects.push(effect)
  }
}

/** The units of one transaction and the promise they resolve on. */
class Batch {
  units = 0
  readonly wakes = new Set<string>()
  readonly effects: (() => void)[] = []
  readonly durable: Promise<void>
  settle!: () => void
  fail!: (error: Error) => void

  constructor() {
    this.durable = new Promise<void>((resolve, reject) => {
      this.settle = resolve
      this.fail = reject
    })
    // A batch nobody awaits (units applied by reads) must not fail as an unhandled rejection;
    // whoever awaits it still sees the failure.
    this.durable.catch(() => {})
  }

  take(unit: UnitEffects): void {
    this.units++
    for (const key of unit.wakes) this.wakes.add(key)
    this.effects.push(...unit.effects)
  }
}
