import type { Database } from 'bun:sqlite'
import { closeSync, fdatasync, fdatasyncSync, fstatSync, openSync, statSync } from 'node:fs'
import type { Event, Reactions } from '../core/events.ts'
import type { Logger } from '../core/log.ts'
import type { Waiters } from '../core/waiters.ts'
import type { Unit, WritePath, WriteTx } from '../core/write-path.ts'
import { Batch, journalOf, type Ran, shuttingDown, storageFailed } from './batch.ts'
import { UnitQueue } from './units.ts'

/**
 * The write path on SQLite: group commit (docs/decisions.md, "Group commit").
 *
 * The first unit of a moment opens one immediate transaction; every unit runs in a savepoint of
 * it, so one that throws is rolled back alone. Units run one at a time (`UnitQueue`: the next
 * starts once the previous, async or not, has settled; a nested unit of the running one joins
 * it). The transaction commits at the end of the event loop's turn (`setImmediate`: the
 * requests that arrived together have all run by then; a lone write waits for no timer), or
 * once the unit running then is done. The commit itself does not wait for the disk
 * (`synchronous = NORMAL` for that one statement): the write-ahead log is flushed afterwards
 * with one `fdatasync` on the thread pool, and while it runs the next batches fill and commit.
 * When the flush returns, every batch committed before it began is durable: its waiters are
 * woken, its effects run and its units resolve, in order. So one flush serves everything that
 * arrived while the previous one ran, and the server keeps working meanwhile.
 *
 * Writes that bypass this path (a migration, `hark admin`, another process) commit with the
 * connection's own `synchronous = FULL`, durable by themselves.
 */
export class GroupCommit<S> implements WritePath<S> {
  /** The batch being filled: its transaction is open. */
  private open: Batch | undefined
  /** Committed batches waiting for the next flush. */
  private committed: Batch[] = []
  /** Batches whose flush is running. */
  private flushing: Batch[] = []
  /** Units one at a time, each in its savepoint; knows the unit a call chain runs in. */
  private readonly units: UnitQueue<S>
  /** A top-level unit is running (awaiting, maybe): the transaction cannot commit under it. */
  private running = false
  /** The end of the turn came while a unit ran: commit as soon as it is done. */
  private commitDue = false
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
    /** The stores units read and write through (`tx.store`). */
    store: S,
    /** How long without a write before the next commits alone (tests set Infinity: never). */
    private readonly quietMs = QUIET_MS,
    /** Run in each transaction just before its COMMIT: the search index's (migration 018). */
    private readonly beforeCommit: () => void = () => {},
  ) {
    this.units = new UnitQueue(db, store)
    // A checkpoint copies each page of the log into the database once, however many commits
    // changed it, and costs two syncs on this thread: a longer log (16 MB instead of 4) is
    // checkpointed a quarter as often, for far fewer page writes where a batch touches index
    // pages all over (bench/fsyncs.ts).
    db.run(`PRAGMA wal_autocheckpoint = ${CHECKPOINT_PAGES}`)
  }

  /** Who reacts to the events units emit (core/events.ts): the queue's, one per write path. */
  get reactions(): Reactions<Event, WriteTx<S>> {
    return this.units.reactions
  }

  run<T>(unit: Unit<S, T>): Promise<T> {
    // Inside a unit, joins it: durable with the outer unit's batch, which whoever awaits the
    // outer unit waits for (waiting for that batch here would wait for itself).
    const parent = this.units.current()
    if (parent) return this.units.nested(parent, unit)
    return this.queue(unit).then(({ value, batch }) => batch.durable.then(() => value))
  }

  apply<T>(unit: Unit<S, T>): Promise<T> {
    const parent = this.units.current()
    if (parent) return this.units.nested(parent, unit)
    return this.queue(unit).then(({ value }) => value)
  }

  /** Queues a top-level unit; it answers its value and the batch it is durable with. */
  private queue<T>(unit: Unit<S, T>): Promise<Ran<T>> {
    const refused = this.refusal()
    if (refused) return Promise.reject(refused)
    return this.units.enqueue(() => this.top(unit))
  }

  /** Why no write is taken now, if none is. */
  private refusal(): Error | undefined {
    if (this.broken) return storageFailed()
    if (this.closed) return shuttingDown()
    return undefined
  }

  /** A unit's turn has come: in the open batch, or a new one (committed at once after quiet). */
  private async top<T>(unit: Unit<S, T>): Promise<Ran<T>> {
    // What was true when it was queued may have changed while it waited its turn.
    const refused = this.refusal()
    if (refused) throw refused
    if (!this.open && this.db.inTransaction) {
      // Someone holds a transaction of their own on this connection: its commit would decide
      // this unit's fate and the flush would not cover it. Every write goes through this path.
      throw new Error('a write-path unit ran inside a transaction opened outside the write path')
    }
    // After a quiet spell, a write is most likely alone: its batch commits as soon as it has
    // run, not at the end of the turn (its flush is every batch's, on the thread pool).
    if (this.quiet()) this.commitDue = true
    this.lastWrite = performance.now()
    const tx = this.units.effects()
    this.running = true
    try {
      const batch = this.open ?? this.begin()
      try {
        const value = await this.units.savepoint(unit, tx)
        batch.take(tx)
        return { value, batch }
      } catch (error) {
        if (this.open === batch && !this.db.inTransaction) this.lost(batch, error)
        throw error
      }
    } finally {
      this.running = false
      if (this.commitDue) {
        this.commitDue = false
        this.commitOpen()
      }
    }
  }

  /**
   * Nothing written for a while and nothing under way: a write now is most likely alone, and
   * committing it on the spot answers it without waiting for the turn to end. SQLite's own sync
   * at that COMMIT (until issue 32's fifth session) held the event loop, and every request that
   * arrived meanwhile, for as long as the disk took: seconds on a busy SD card
   * (bench/slow-disk.ts), ~4% of the loop's time under wrk on an SSD (bench/README.md).
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

  /**
   * A unit failed and took the whole transaction with it (SQLite rolls it all back on some
   * errors): nothing of the batch is kept, so every unit in it fails, none half-written.
   */
  private lost(batch: Batch, error: unknown): void {
    this.open = undefined
    this.db.run('PRAGMA synchronous = FULL')
    this.log.error(`a write failed and rolled back its batch of ${batch.units} writes: ${error}`)
    batch.fail(storageFailed())
  }

  stats(): { writes: number; flushes: number } {
    return { writes: this.written, flushes: this.flushes }
  }

  failure(): Error | undefined {
    return this.broken
  }

  settled(): Promise<void> | undefined {
    // Units queued or running now are part of "everything written so far": their batch is
    // known once they have run (the ones queued after them are not waited for).
    if (this.units.pending > 0) return this.units.drained().then(() => this.lastBatch())
    return this.lastBatch()
  }

  private lastBatch(): Promise<void> | undefined {
    const last = this.open ?? this.committed.at(-1) ?? this.flushing.at(-1)
    return last?.durable
  }

  async close(): Promise<void> {
    if (this.closed) return
    await this.flush()
    this.closed = true
    this.closeWal()
  }

  async flush(): Promise<void> {
    if (this.closed) return
    // A unit under way (awaiting its stores) is in the open transaction: committing now would
    // commit half of it. Everything queued so far runs first.
    await this.units.drained()
    this.flushNow()
  }

  /** `flush` once no unit runs: commit the open batch and sync the log on this thread. */
  private flushNow(): void {
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
    if (this.running) {
      // A unit is awaiting inside the transaction: the commit waits for it, not for the ones
      // queued behind it (they start the next batch), so a stream of units cannot hold it open.
      this.commitDue = true
      return
    }
    this.open = undefined
    try {
      this.beforeCommit()
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
