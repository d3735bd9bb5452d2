import type { SQL, TransactionSQL } from 'bun'
import type { Event, Reactions } from '../../core/events.ts'
import type { Unit, WriteTx } from '../../core/write-path.ts'
import { UnitEffects } from '../units.ts'
import type { WakeBus } from './wake-bus.ts'

/**
 * One transaction for a batch of one key's units (a person's sends, write-path.ts), under one
 * hold of the person's row lock and one COMMIT (docs/decisions.md, "One person's sends on
 * Postgres").
 *
 * Pipelined first: every unit of the batch starts at once, without savepoints, so their
 * statements go down the connection back to back and the backend runs them one after another
 * with no round trip through this process between two units (one unit at a time, each waiting
 * for its answers before the next began, was ~1.4 ms a unit: the bound at ~700 sends/s). Kept
 * only if every unit succeeded and no statement failed: a unit that fails, a nested unit that
 * fails (`Shared.failed`), or a statement whose error a unit caught (the transaction is then
 * aborted: the check before COMMIT fails) rolls the whole transaction back, and the same units
 * run again, one at a time, each in a savepoint, where a failing unit fails alone (`serial`).
 * Nothing of the pipelined attempt is kept: not its rows, wakes, effects or values.
 *
 * Units of one batch key therefore run interleaved in the first attempt: they must not depend
 * on one another's writes except through what the database refuses (a unique key, a lock):
 * true of sends (each inserts its own rows; the person's `change_seq` is one atomic UPDATE per
 * send; an Idempotency-Key is held in the instance and unique in the table).
 */
export async function runBatch<S>(
  host: BatchHost<S>,
  items: Queued<S>[],
  ran: () => void,
): Promise<Queued<S>[]> {
  // A lone unit too: pipelined, its BEGIN goes down the connection with its first statement,
  // where `sql.begin` (serial's) waits for BEGIN's answer before sending anything else: one
  // round trip fewer per unit at rest (docs/decisions.md, "One person's sends on Postgres,
  // fifth pass"). It runs again in `serial` only where a savepoint would have changed its
  // outcome (a nested unit failed, or it caught a failed statement).
  const again = await pipelined(host, items, ran)
  if (again) return again
  return await serial(host, items, ran)
}

/** What a batch's transaction needs of the write path it runs for (write-path.ts). */
export interface BatchHost<S> {
  readonly sql: SQL
  readonly open: (sql: SQL) => S
  readonly reactions: Reactions<Event, WriteTx<S>>
  readonly bus: Pick<WakeBus, 'notify'> | undefined
  /** Runs `unit` as the running unit of its call chain over `txSql` (and its nested ones). */
  within<T>(
    txSql: TransactionSQL,
    unit: Unit<S, T>,
    effects: UnitEffects<S>,
    shared?: Shared,
  ): Promise<T>
  /** Whether a unit the database aborted runs again (counted, said in the log). */
  again(item: Queued<S>, error: unknown): boolean
  /** After a COMMIT: its units counted, waiters woken, effects run. */
  committed(done: UnitEffects<S>[]): void
}

/** A top-level unit waiting for its batch key's next transaction, and its caller's answer. */
export interface Queued<S> {
  unit: Unit<S, unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  /** Its runs so far, this one included. */
  attempt: number
}

/** What the units of a pipelined batch share: whether one of them (or a nested one) failed. */
export interface Shared {
  failed: boolean
}

interface Done<S> {
  item: Queued<S>
  value: unknown
  effects: UnitEffects<S>
}

/**
 * The units side by side in one transaction, on a connection of its own (`reserve`), BEGIN,
 * the wakes' NOTIFY and COMMIT sent without waiting: while the person's row is locked, the
 * only round trips are the units' own. A failed statement (a unit's, or the NOTIFY) aborts the
 * transaction, and Postgres then answers COMMIT with ROLLBACK: nothing was kept, the units run
 * again one at a time. Undefined in that case; otherwise every unit is settled but those to
 * run again, which it returns.
 */
async function pipelined<S>(
  host: BatchHost<S>,
  items: Queued<S>[],
  ran: () => void,
): Promise<Queued<S>[] | undefined> {
  const conn = await host.sql.reserve()
  let broken = false
  // BEGIN and COMMIT as prepared statements (tagged, not `unsafe`): Bun.sql writes a simple
  // query only once every answer before it is in, and nothing after it until its own answer
  // is, so a simple BEGIN held the units' statements back by a turn of this process's event
  // loop, and a simple COMMIT waited for the NOTIFY's answer, with the person's row locked.
  // Prepared, they go down the connection with the others (docs/decisions.md, "fourth pass").
  const send = (query: SQL.Query<unknown>) => {
    const answer = query.execute()
    answer.catch(() => {}) // its failure shows in the units' statements, or in COMMIT's answer
    return answer
  }
  try {
    send(conn`BEGIN`)
    // Within a unit, its statements run in order; between units, in the order they are sent.
    const txSql = conn as unknown as TransactionSQL
    const store = host.open(conn)
    const shared: Shared = { failed: false }
    const outcomes = await Promise.allSettled(
      items.map(async (item): Promise<Done<S>> => {
        const effects = new UnitEffects(store, host.reactions)
        return { item, value: await host.within(txSql, item.unit, effects, shared), effects }
      }),
    )
    const done: Done<S>[] = []
    for (const outcome of outcomes) if (outcome.status === 'fulfilled') done.push(outcome.value)
    if (shared.failed || done.length < items.length) {
      await conn.unsafe('ROLLBACK').catch(() => {
        broken = true
      })
      // A lone unit that failed by itself (no nested unit failed, which a savepoint would
      // have kept to itself) fails the same way alone: its error is its caller's at once, or
      // it runs again if the database aborted it (a deadlock's victim).
      const [only] = outcomes
      if (items.length > 1 || shared.failed || only?.status !== 'rejected') return undefined
      const item = items[0] as Queued<S>
      ran()
      if (host.again(item, only.reason)) return [item]
      item.reject(only.reason)
      return []
    }
    const wakes = done.flatMap((d) => d.effects.wakes)
    const notified = host.bus && wakes.length > 0 ? host.bus.notify(conn, wakes) : undefined
    notified?.catch(() => {})
    ran()
    let answer: { command?: string | null }
    try {
      answer = await send(conn`COMMIT`)
    } catch (error) {
      // The COMMIT failed (or the connection): nothing in it was kept.
      broken = true
      const again: Queued<S>[] = []
      for (const { item } of done) {
        if (host.again(item, error)) again.push(item)
        else item.reject(error)
      }
      return again
    }
    // Its statements ran before COMMIT, in the transaction (`sendWakes` starts them all before
    // it returns): a failure of one made the COMMIT a ROLLBACK.
    await notified?.catch(() => {})
    if (answer.command !== 'COMMIT') return undefined
    host.committed(done.map((d) => d.effects))
    for (const { item, value } of done) item.resolve(value)
    return []
  } finally {
    if (broken) await conn.close().catch(() => {})
    else conn.release()
  }
}

/**
 * One transaction for `items`, each unit in a savepoint (a lone unit needs none: its failure
 * is the transaction's). `ran` is called once its units have run (its COMMIT on its way) or
 * it failed before. Settles every unit but those to run again, which it returns.
 */
async function serial<S>(
  host: BatchHost<S>,
  items: Queued<S>[],
  ran: () => void,
): Promise<Queued<S>[]> {
  const lone = items.length === 1
  const done: Done<S>[] = []
  const failed: { item: Queued<S>; error: unknown }[] = []
  const again: Queued<S>[] = []
  try {
    await host.sql.begin(async (txSql) => {
      const store = host.open(txSql)
      const sent: Promise<unknown>[] = []
      for (const item of items) {
        const effects = new UnitEffects(store, host.reactions)
        try {
          const value = lone
            ? await host.within(txSql, item.unit, effects)
            : await savepointed(host, txSql, item.unit, effects, sent)
          done.push({ item, value, effects })
        } catch (error) {
          if (lone) throw error
          // Rolled back to its savepoint: the others go on. Aborted by the database
          // (a deadlock's victim), it runs again in a later transaction.
          if (host.again(item, error)) again.push(item)
          else failed.push({ item, error })
        }
      }
      ran()
      // Answered by now (they were sent before the last unit's statements); a failure of
      // one fails the transaction.
      await Promise.all(sent)
      const wakes = done.flatMap((d) => d.effects.wakes)
      if (host.bus && wakes.length > 0) await host.bus.notify(txSql, wakes)
    })
  } catch (error) {
    // The transaction is gone (the lone unit failed, or the COMMIT, or the connection):
    // nothing in it was kept.
    for (const { item } of lone ? [{ item: items[0] as Queued<S> }] : done) {
      if (host.again(item, error)) again.push(item)
      else failed.push({ item, error })
    }
    done.length = 0
  }
  ran()
  if (done.length > 0) host.committed(done.map((d) => d.effects))
  for (const { item, value } of done) item.resolve(value)
  for (const { item, error } of failed) item.reject(error)
  return again
}

/**
 * `unit` in a savepoint of a batch's transaction. SAVEPOINT and RELEASE are sent without
 * waiting for their answers: they go down the connection ahead of the unit's first statement
 * and the next unit's (pipelined), two round trips fewer per unit while the person's lock is
 * held (Bun's `savepoint()` awaits both). Their answers are in `sent`, awaited before the
 * COMMIT. A unit that fails is rolled back to its savepoint before the next one starts.
 */
async function savepointed<S, T>(
  host: BatchHost<S>,
  txSql: TransactionSQL,
  unit: Unit<S, T>,
  effects: UnitEffects<S>,
  sent: Promise<unknown>[],
): Promise<T> {
  const send = (statement: string) => {
    const answer = txSql.unsafe(statement).execute()
    answer.catch(() => {}) // awaited with the others before the COMMIT
    sent.push(answer)
  }
  send('SAVEPOINT hark_unit')
  try {
    const value = await host.within(txSql, unit, effects)
    send('RELEASE SAVEPOINT hark_unit')
    return value
  } catch (error) {
    await txSql.unsafe('ROLLBACK TO SAVEPOINT hark_unit')
    await txSql.unsafe('RELEASE SAVEPOINT hark_unit')
    throw error
  }
}
