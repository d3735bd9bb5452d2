import type { Event, Reactions } from './events.ts'

/**
 * The one way anything is written (docs/architecture.md, "The write path"). Services hand it
 * units: functions that read and write through the stores the write path hands them
 * (`tx.store`) and say whom to wake. A unit may be async: it awaits its store calls. The
 * implementation batches the units of a moment into one transaction (group commit) and makes
 * them durable together; nothing a unit did is seen outside the server before that.
 *
 * Generic over the stores `S` (core/ knows no domain): the server instantiates it with its
 * async stores (server/context.ts), on SQLite the connection's, on Postgres the ones bound to
 * the batch's transaction.
 *
 * The contract, whatever store sits behind it:
 * - a unit is all or nothing: if it throws (or its promise rejects), nothing it wrote is kept,
 *   the error is its own, and the other units of its batch are not touched;
 * - the units of a batch run one at a time: the next starts once the previous has settled, so
 *   a unit's reads and writes are never interleaved with another unit's;
 * - a unit awaits nothing but its stores and the write path's own work (nested units): no
 *   network, no file I/O, no timers. While it runs, the batch's transaction is open and every
 *   other write waits behind it; bytes of an upload are stored before the record's unit runs;
 * - `run` resolves only once the unit is durable (after a crash or a power loss it is there);
 * - waiters are woken once per durable batch, every change of it visible when they read, and
 *   `after` effects run then too, in the order the units ran; a failed unit wakes no one;
 * - no answer leaves the server showing state that is not yet durable: the HTTP layer awaits
 *   `settled()` before it answers (server/app.ts), so a write made on the way by a read (an
 *   overdue question expired, the person's messages marked seen) may use `apply`.
 */
export interface WritePath<S = unknown, E extends Event = Event> {
  /** Runs `unit` in the current batch and resolves with its value once that is durable. */
  run<T>(unit: Unit<S, T, E>, options?: RunOptions): Promise<T>
  /**
   * Runs `unit` in the current batch and resolves with its value once it ran, durable with the
   * batch (see `settled`). Called from inside a unit's own call chain, joins it (a nested
   * savepoint): a unit may call services that write. Called from anywhere else (another
   * request's code running while a unit awaits), it is a unit of its own, queued.
   */
  apply<T>(unit: Unit<S, T, E>, options?: RunOptions): Promise<T>
  /**
   * Settles once everything written so far is durable (rejects if it could not be made so);
   * undefined when it already is, which costs nothing.
   */
  settled(): Promise<void> | undefined
  /**
   * Commits and makes durable everything written so far, now, on this thread: for the moments
   * another connection must find the file free (start-up done, a backup taken in process).
   * Units still running (awaiting) are not cut short: flush waits for none and commits what
   * has finished; the writes it cannot take are refused by no one, they commit with the next
   * batch.
   */
  flush(): void
  /** `flush`, then refuses further writes (shutdown). */
  close(): void
  /** Writes (units) committed and syncs made for them so far, for `/metrics`. */
  stats(): { writes: number; flushes: number }
  /**
   * Why no write is taken any more, once a flush to disk failed (every write is refused with
   * 503 until the server is restarted: `GET /health` says so); undefined while all is well.
   */
  failure(): Error | undefined
  /**
   * Who reacts to the events units emit (`tx.emit`): empty until the assembly registers its
   * reactions (server/reactions.ts), once, as the context is built. Untyped here: an engine's
   * write path knows no events; the assembly registers them typed (`typed`, core/events.ts).
   */
  readonly reactions: Reactions
}

/** What a caller may tell the write path about a unit; an engine that has no use for it ignores it. */
export interface RunOptions {
  /**
   * Units given the same `batch` may run in one transaction (all or nothing still, alone in
   * failing): on Postgres, one person's units under one hold of their row's lock
   * (db/pg/write-path.ts), first side by side, their statements interleaved, then, if any of
   * them fails, again one at a time in savepoints (db/pg/batch-tx.ts). So units sharing a key
   * must not read what a sibling writes except where the database refuses a conflict (a unique
   * key): true of sends. Units with different ones, or none, never share a transaction there.
   * SQLite's group commit batches every unit of a moment anyway, one at a time.
   */
  batch?: string
}

/** A unit of work: reads and writes through `tx.store`, synchronous or async. */
export type Unit<S, T, E extends Event = Event> = (tx: WriteTx<S, E>) => T | Promise<T>

/** What a unit can ask of the write path besides writing. */
export interface WriteTx<S = unknown, E extends Event = Event> {
  /** The stores this unit must read and write through (its transaction's). */
  readonly store: S
  /** Wake the waiters under these keys once the batch is durable (once per key per batch). */
  wake(...keys: string[]): void
  /** Run `effect` once the batch is durable (a timer to re-arm, a worker to kick). */
  after(effect: () => void): void
  /**
   * Tells the house what this unit did (core/events.ts): its reactions run now, in this unit
   * and its transaction, and settle with the returned promise, which the unit awaits (a
   * reaction that fails fails the unit). Rolled back, the unit leaves no trace of them.
   */
  emit(event: E): Promise<void>
}
