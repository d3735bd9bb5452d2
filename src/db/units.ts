import type { Database } from 'bun:sqlite'
import { AsyncLocalStorage } from 'node:async_hooks'
import { type Event, Reactions } from '../core/events.ts'
import type { Unit, WriteTx } from '../core/write-path.ts'

/**
 * Units one at a time on one SQLite connection (the write path's queue, shared by the group
 * commit and the direct write path). A unit may be async, and while it awaits, the event loop
 * runs other requests' code: their units must wait their turn, or their statements would land
 * inside this unit's savepoint (and be rolled back with it, or keep what it rolled back). So a
 * unit starts once the previous one has settled, and each runs in its own savepoint.
 *
 * Which unit is running is known by the async call chain (`AsyncLocalStorage`), not by a field:
 * code of another request that runs during the unit's await sees no unit and queues its own,
 * while a service the unit itself calls (however deep in its awaits) joins it, in a nested
 * savepoint. The storage belongs to this queue (one per write path), not to the module.
 */
export class UnitQueue<S> {
  private readonly running = new AsyncLocalStorage<Level<S>>()
  /** Settles once every unit queued so far has settled. */
  private tail: Promise<unknown> = Promise.resolve()
  /** Units queued or running. */
  pending = 0

  constructor(
    private readonly db: Database,
    private readonly store: S,
    /** Who reacts to the events its units emit (the write path's). */
    readonly reactions: Reactions<Event, WriteTx<S>> = new Reactions(),
  ) {}

  /** Effects for a new top-level unit, over this queue's stores. */
  effects(): UnitEffects<S> {
    return new UnitEffects(this.store, this.reactions)
  }

  /** The unit this async call chain is running in, while it runs. */
  current(): Level<S> | undefined {
    const level = this.running.getStore()
    return level?.live ? level : undefined
  }

  /** Runs `task` once every task queued before it has settled (whatever its outcome). */
  enqueue<T>(task: () => Promise<T>): Promise<T> {
    this.pending++
    const result = this.tail.then(task)
    this.tail = result.then(
      () => this.pending--,
      () => this.pending--,
    )
    return result
  }

  /** Settles once every unit queued before this call has settled. */
  drained(): Promise<unknown> {
    return this.tail
  }

  /**
   * Runs `unit` inside `parent`, in a nested savepoint, after the nested units `parent` started
   * before it (one at a time there too). Its wakes and effects become the parent's if it
   * succeeds and are dropped with its writes if it fails.
   */
  nested<T>(parent: Level<S>, unit: Unit<S, T>): Promise<T> {
    const run = async () => {
      const child = new UnitEffects(this.store, this.reactions)
      const value = await this.savepoint(unit, child)
      parent.effects.absorb(child)
      return value
    }
    return afterSiblings(parent, run)
  }

  /**
   * Runs `unit` in a savepoint, as the running unit of its async call chain: released when it
   * (and every nested unit it started) settles, rolled back if it fails. The caller holds the
   * transaction the savepoint is in. (`query` keeps each statement compiled: a unit costs no
   * parsing.)
   */
  async savepoint<T>(unit: Unit<S, T>, effects: UnitEffects<S>): Promise<T> {
    const level: Level<S> = { effects, live: true, tail: Promise.resolve() }
    this.db.query('SAVEPOINT unit').run()
    try {
      const value = await runLevel(this.running, level, () => unit(effects))
      this.db.query('RELEASE unit').run()
      return value
    } catch (error) {
      // The transaction may be gone (SQLite rolls back the whole of it on some errors): then
      // there is no savepoint left to undo, and the write path finds it closed.
      if (this.db.inTransaction) {
        this.db.query('ROLLBACK TO unit').run()
        this.db.query('RELEASE unit').run()
      }
      throw error
    }
  }
}

/** What the nesting of units needs of a running unit (on either engine's write path). */
export interface Nesting {
  /** False once the unit has settled: a callback firing later is not part of it. */
  live: boolean
  /** Settles once the nested units it started so far have settled. */
  tail: Promise<unknown>
}

/**
 * Runs `body` as the running unit `level` of its async call chain; then waits for the nested
 * units it started and did not await (they are part of it), and marks it settled.
 */
export async function runLevel<L extends Nesting, T>(
  running: AsyncLocalStorage<L>,
  level: L,
  body: () => T | Promise<T>,
): Promise<T> {
  try {
    const value = await running.run(level, body)
    for (let tail = level.tail; ; tail = level.tail) {
      await tail
      if (tail === level.tail) break
    }
    return value
  } finally {
    level.live = false
  }
}

/** Runs `run` once the nested units `parent` started before it have settled (one at a time). */
export function afterSiblings<T>(parent: Nesting, run: () => Promise<T>): Promise<T> {
  const result = parent.tail.then(run)
  parent.tail = result.catch(() => {})
  return result
}

/** A unit running: its effects, whether it still runs, and its nested units' queue. */
interface Level<S> extends Nesting {
  effects: UnitEffects<S>
}

/**
 * What one unit asked for besides its writes. Its events are not kept: their reactions run as
 * they are emitted, in the unit (core/events.ts), and what they ask for lands here too.
 */
export class UnitEffects<S> implements WriteTx<S> {
  wakes: string[] = []
  effects: (() => void)[] = []

  constructor(
    readonly store: S,
    private readonly reactions: Pick<Reactions<Event, WriteTx<S>>, 'dispatch'>,
  ) {}

  emit(event: Event): Promise<void> {
    return this.reactions.dispatch(this, event)
  }

  wake(...keys: string[]): void {
    this.wakes.push(...keys)
  }

  after(effect: () => void): void {
    this.effects.push(effect)
  }

  /** A nested unit succeeded: what it asked for is asked by this one. */
  absorb(child: UnitEffects<S>): void {
    this.wakes.push(...child.wakes)
    this.effects.push(...child.effects)
  }
}
