/**
 * The one way anything is written (docs/architecture.md, "The write path"). Services hand it
 * units: synchronous functions that read and write through the stores and say whom to wake.
 * The implementation batches the units of a moment into one transaction (group commit) and
 * makes them durable together; nothing a unit did is seen outside the server before that.
 *
 * The contract, whatever store sits behind it:
 * - a unit is all or nothing: if it throws, nothing it wrote is kept, the error is its own, and
 *   the other units of its batch are not touched;
 * - `run` resolves only once the unit is durable (after a crash or a power loss it is there);
 * - waiters are woken once per durable batch, every change of it visible when they read, and
 *   `after` effects run then too, in the order the units ran; a failed unit wakes no one;
 * - no answer leaves the server showing state that is not yet durable: the HTTP layer awaits
 *   `settled()` before it answers (server/app.ts), so a write made on the way by a read (an
 *   overdue question expired, the person's messages marked seen) may use `apply`.
 */
export interface WritePath {
  /** Runs `unit` in the current batch and resolves with its value once that is durable. */
  run<T>(unit: (tx: WriteTx) => T): Promise<T>
  /**
   * Runs `unit` in the current batch now and returns its value, durable with the batch (see
   * `settled`). Inside a unit, joins it: a unit may call services that write.
   */
  apply<T>(unit: (tx: WriteTx) => T): T
  /**
   * Settles once everything written so far is durable (rejects if it could not be made so);
   * undefined when it already is, which costs nothing.
   */
  settled(): Promise<void> | undefined
  /**
   * Commits and makes durable everything written so far, now, on this thread: for the moments
   * another connection must find the file free (start-up done, a backup taken in process).
   */
  flush(): void
  /** `flush`, then refuses further writes (shutdown). */
  close(): void
  /** Writes (units) committed and syncs made for them so far, for `/metrics`. */
  stats(): { writes: number; flushes: number }
}

/** What a unit can ask of the write path besides writing. */
export interface WriteTx {
  /** Wake the waiters under these keys once the batch is durable (once per key per batch). */
  wake(...keys: string[]): void
  /** Run `effect` once the batch is durable (a timer to re-arm, a worker to kick). */
  after(effect: () => void): void
}
