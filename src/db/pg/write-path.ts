import { AsyncLocalStorage } from 'node:async_hooks'
import type { SQL, TransactionSQL } from 'bun'
import type { AsyncStores } from '../../core/context.ts'
import { type Event, Reactions } from '../../core/events.ts'
import type { Logger } from '../../core/log.ts'
import type { Waiters } from '../../core/waiters.ts'
import type { RunOptions, Unit, WritePath, WriteTx } from '../../core/write-path.ts'
import { shuttingDown } from '../batch.ts'
import { afterSiblings, type Nesting, runLevel, UnitEffects } from '../units.ts'
import { type BatchHost, type Queued, runBatch, type Shared } from './batch-tx.ts'
import type { WakeBus } from './wake-bus.ts'

/**
 * The write path on Postgres (issue 20; a tested seam, not used by `hark serve` yet): the twin
 * of GroupCommit over `sql`, a Bun.sql pool on the shared database.
 *
 * Each top-level unit is a transaction of its own, its `tx.store` the twins bound to it: a
 * batch of one (batch-tx.ts), its BEGIN sent with its first statement and its COMMIT with its
 * wakes' NOTIFY, no answer awaited between. Postgres itself groups the WAL flushes of commits
 * that arrive together (its own group commit), so one transaction per unit costs no sync per
 * unit under load. Units run concurrently, each on its own connection, not one at a time as on
 * SQLite's single writer: correctness between them is the stores' job (row locks, conditional
 * updates; docs/scaling.md, Status). A unit that Postgres aborts for a serialization failure
 * or a deadlock is run again from the start on a new transaction: a unit is a function of what
 * it reads through its stores, so its re-run decides afresh (core/write-path.ts).
 *
 * A unit called from inside a running unit's own async call chain (a service it calls, however
 * deep its awaits) joins it, one at a time within its parent: first inline, with no savepoint
 * (nothing waits for one); if it fails, the whole transaction is rolled back and run again with
 * each nested unit in a savepoint of its own (a savepoint holds every statement the connection
 * runs while it is open), where its failure is its caller's to handle and the rest commits.
 * Code of another request that runs while a unit awaits sees no unit and gets a transaction of
 * its own. Which unit a call chain runs in is known by `AsyncLocalStorage`, per instance, as in
 * units.ts.
 *
 * A unit's waiter keys go to the wake bus inside its transaction, before COMMIT, so other
 * instances hear them on commit only; after the commit this instance's own waiters are woken
 * (no round trip) and the unit's `after` effects run, in order. A committed transaction is
 * durable when COMMIT returns (`synchronous_commit` on, Postgres' default), so `run` and
 * `apply` both resolve after the commit.
 *
 * Units given the same `batch` (a person's sends: their id) share transactions: one person's
 * writes wait on their row's lock one after another anyway (the lock that keeps their `seq` in
 * commit order), so one transaction per unit meant one lock hold, and one COMMIT with its WAL
 * flush, per unit. The first unit of a batch key starts a transaction at once; the units that
 * arrive while it runs queue and run together in the next one (up to `BATCH_MAX`), under one
 * hold of the lock and one COMMIT: side by side, their statements pipelined, and if any of them
 * fails, rolled back and run again one at a time, each in its own savepoint, where a unit that
 * fails fails alone (batch-tx.ts). Every caller is answered after the COMMIT (its own failure
 * included), and a COMMIT that fails fails every unit in it (or runs them again, if the
 * database aborted it for a deadlock or a serialization failure). See docs/decisions.md, "One
 * person's sends on Postgres: a batch per lock hold" and its second pass.
 */
export class PgWritePath<S = AsyncStores> implements WritePath<S> {
  private readonly running = new AsyncLocalStorage<Level<S>>()
  /** Top-level units begun and not settled yet. */
  private readonly inFlight = new Set<Promise<unknown>>()
  private closed = false
  /** Units committed, and the transactions they committed in. */
  private writes = 0
  private commits = 0
  /** Per batch key with a transaction running: the units waiting for the next one. */
  private readonly batches = new Map<string, Queued<S>[]>()
  /** Units run with no batch key so far: each is a batch of its own, under a key of its own. */
  private lone = 0
  /** Makes a unit's `tx.store` over its transaction or savepoint. */
  private readonly open: (sql: SQL) => S
  private readonly bus: Pick<WakeBus, 'notify'> | undefined
  private readonly attempts: number
  /** Who reacts to the events units emit (core/events.ts): registered by the assembly. */
  readonly reactions = new Reactions<Event, WriteTx<S>>()
  /** What a batch's transaction needs of this write path (batch-tx.ts). */
  private readonly host: BatchHost<S>

  constructor(
    sql: SQL,
    /** This instance's waiters, woken after each commit. */
    private readonly waiters: Pick<Waiters, 'wake'>,
    private readonly log: Logger,
    options: PgWritePathOptions<S>,
  ) {
    this.open = options.stores
    this.bus = options.bus
    this.attempts = options.attempts ?? ATTEMPTS
    this.host = {
      sql,
      open: this.open,
      reactions: this.reactions,
      bus: this.bus,
      within: (txSql, unit, effects, shared) => this.within(txSql, unit, effects, shared),
      again: (item, error) => this.again(item, error),
      committed: (done) => {
        this.writes += done.length
        this.commits++
        this.committed(done)
      },
    }
  }

  run<T>(unit: Unit<S, T>, options?: RunOptions): Promise<T> {
    // A joined unit is durable with its parent, which whoever awaits the parent waits for.
    const parent = this.current()
    if (parent) return this.nested(parent, unit)
    return this.top(unit, options?.batch)
  }

  apply<T>(unit: Unit<S, T>, options?: RunOptions): Promise<T> {
    // No earlier answer than `run`: the commit is what makes a unit's writes visible at all.
    return this.run(unit, options)
  }

  /**
   * The stores of the unit the calling async chain runs in (its transaction's or savepoint's),
   * undefined outside units: where `ctx.store` sends a call made inside a unit
   * (`routedStores`, db/async-stores.ts). On SQLite both are one connection: no such routing.
   */
  unitStore(): S | undefined {
    return this.current()?.effects.store
  }

  private current(): Level<S> | undefined {
    const level = this.running.getStore()
    return level?.live ? level : undefined
  }

  private top<T>(unit: Unit<S, T>, batch: string | undefined): Promise<T> {
    if (this.closed) return Promise.reject(shuttingDown())
    // A unit of no batch is a batch of its own: the same transaction, pipelined (batch-tx.ts).
    const result = this.queued(batch ?? `\0unit ${++this.lone}`, unit)
    const settled = result.then(
      () => undefined,
      () => undefined,
    )
    this.inFlight.add(settled)
    void settled.then(() => this.inFlight.delete(settled))
    return result
  }

  /** After a COMMIT: this instance's waiters woken (once per key), then the effects, in order. */
  private committed(done: UnitEffects<S>[]): void {
    const keys = new Set(done.flatMap((e) => e.wakes))
    if (keys.size > 0) this.waiters.wake(...keys)
    for (const effect of done.flatMap((e) => e.effects)) {
      try {
        effect()
      } catch (error) {
        this.log.error(`after a write: ${error}`)
      }
    }
  }

  /** `unit` in the next transaction of its batch key, started now if none is running. */
  private queued<T>(batch: string, unit: Unit<S, T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const item: Queued<S> = {
        unit,
        resolve: resolve as (value: unknown) => void,
        reject,
        attempt: 1,
      }
      const waiting = this.batches.get(batch)
      if (waiting) {
        waiting.push(item)
        return
      }
      this.batches.set(batch, [item])
      void this.drain(batch)
    })
  }

  /** Transactions for `batch` one after another, while units wait for one. Never rejects. */
  private async drain(batch: string): Promise<void> {
    const waiting = this.batches.get(batch) as Queued<S>[]
    // The transaction before, committing while the next one runs its units: the next one's
    // first write waits in the database for its lock and goes on the moment it is released,
    // not a round trip through this process later. At most one commits while one runs.
    let committing: Promise<void> = Promise.resolve()
    for (;;) {
      if (waiting.length === 0) {
        await committing
        if (waiting.length > 0) continue
        this.batches.delete(batch)
        return
      }
      let ran = () => {}
      const running = new Promise<void>((resolve) => {
        ran = resolve
      })
      const settled = runBatch(this.host, waiting.splice(0, BATCH_MAX), ran)
      await running
      await committing
      committing = settled.then((again) => {
        waiting.unshift(...again)
      })
    }
  }

  /** Whether a unit the database aborted runs again (counted, and said in the log). */
  private again(item: Queued<S>, error: unknown): boolean {
    if (item.attempt >= this.attempts || !retryable(error)) return false
    item.attempt++
    this.log.warn(`a write was aborted by the database (${error}); running it again`)
    return true
  }

  /**
   * Runs `unit` as the running unit of its async call chain over `txSql` (a transaction or a
   * savepoint), and then waits for the nested units it started and did not await: they are
   * part of it, and its transaction must not end under them.
   */
  private async within<T>(
    txSql: TransactionSQL,
    unit: Unit<S, T>,
    effects: UnitEffects<S>,
    shared?: Shared,
  ): Promise<T> {
    const level: Level<S> = { txSql, effects, shared, live: true, tail: Promise.resolve() }
    return runLevel(this.running, level, () => unit(effects))
  }

  /**
   * `unit` inside `parent`, in a savepoint, after the nested units `parent` started before it.
   * Its wakes and effects become the parent's if it succeeds; if it fails, Bun rolls back to
   * the savepoint, the parent goes on and the error is the caller's to handle.
   */
  private nested<T>(parent: Level<S>, unit: Unit<S, T>): Promise<T> {
    const shared = parent.shared
    if (shared) return afterSiblings(parent, () => this.inline(parent, shared, unit))
    const run = async () => {
      let child: UnitEffects<S> | undefined
      const value = (await parent.txSql.savepoint(async (sp) => {
        child = new UnitEffects(this.open(sp), this.reactions)
        return this.within(sp, unit, child)
      })) as T
      if (child) parent.effects.absorb(child)
      return value
    }
    return afterSiblings(parent, run)
  }

  /**
   * `unit` inside `parent` in a pipelined batch (batch-tx.ts), without a savepoint: another
   * unit's statements may be between its own, so a savepoint would take theirs too. If it
   * fails, its writes cannot be undone alone: the batch is marked, rolled back whole and run
   * again one unit at a time, each in a savepoint, where this one fails alone.
   */
  private async inline<T>(parent: Level<S>, shared: Shared, unit: Unit<S, T>): Promise<T> {
    const child = new UnitEffects(parent.effects.store, this.reactions)
    try {
      const value = await this.within(parent.txSql, unit, child, shared)
      parent.effects.absorb(child)
      return value
    } catch (error) {
      shared.failed = true
      throw error
    }
  }

  /**
   * Nothing to wait for before an answer: every unit's `run` and `apply` resolve after its
   * COMMIT (durable then), so what a request awaited is durable, and a read sees committed rows
   * only. Waiting here for every unit in flight on the instance (other people's writes, one
   * queued on a person's lock another instance holds, one being retried) would hold every
   * answer behind them for nothing.
   */
  settled(): undefined {
    return undefined
  }

  /** Waits for every unit in flight, and for those begun meanwhile. */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight)
  }

  async close(): Promise<void> {
    if (this.closed) return
    await this.flush()
    this.closed = true
  }

  /** Postgres makes each COMMIT durable itself, or fails it: nothing here stops the path. */
  failure(): undefined {
    return undefined
  }

  stats(): { writes: number; flushes: number } {
    // Postgres syncs its log per commit (or per group of them): one flush per commit, as far
    // as this process can tell; a batch's units share theirs.
    return { writes: this.writes, flushes: this.commits }
  }
}

/** A unit running: its transaction (or savepoint), its effects, its nested units' queue. */
interface Level<S> extends Nesting {
  txSql: TransactionSQL
  effects: UnitEffects<S>
  /** Set in a pipelined batch (batch-tx.ts): its units run side by side, without savepoints. */
  shared: Shared | undefined
}

/**
 * Units in one batch's transaction, at most: the lock is held while they run one after
 * another, and another instance's writes for the person wait that long. And each writing
 * savepoint is a subtransaction: past 64 in one transaction a backend's cache of them
 * overflows, and every snapshot taken in the database then looks them up in pg_subtrans.
 */
const BATCH_MAX = 32

export interface PgWritePathOptions<S> {
  /** Sends the keys to the other instances; without it, only this instance's are woken. */
  bus?: Pick<WakeBus, 'notify'>
  /** Runs of a unit Postgres aborted for a serialization failure or deadlock, at most. */
  attempts?: number
  /**
   * The stores a unit gets over its transaction: every twin (`openPgStores`, handed in by the
   * server, which knows the domains; tests add a raw handle to take row locks with).
   */
  stores: (sql: SQL) => S
}

/** Runs of a unit the database aborted (serialization failure, deadlock), at most. */
const ATTEMPTS = 5

/** SQLSTATEs that abort a transaction through no fault of its own: running it again may pass. */
const RETRYABLE = new Set(['40001', '40P01'])

function retryable(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | null)?.errno
  return typeof errno === 'string' && RETRYABLE.has(errno)
}
