import { existsSync } from 'node:fs'
import { HarkError } from '../core/errors.ts'
import type { UnitEffects } from './units.ts'

/** The units of one transaction and the promise they resolve on. */
export class Batch {
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

  take(unit: UnitEffects<unknown>): void {
    this.units++
    for (const key of unit.wakes) this.wakes.add(key)
    this.effects.push(...unit.effects)
  }
}

/** A unit's value and the batch it is durable with. */
export interface Ran<T> {
  value: T
  batch: Batch
}

/**
 * The file a commit lands in: the write-ahead log, or the database itself where SQLite could
 * not use one (a file system without shared memory falls back to a rollback journal).
 */
export function journalOf(database: string): string {
  const wal = `${database}-wal`
  return existsSync(wal) ? wal : database
}

export const storageFailed = () =>
  new HarkError(503, 'the database could not store this write; nothing was saved, try again')

/** Why a write is refused once the write path is closed (either engine's). */
export const shuttingDown = () =>
  new HarkError(503, 'the server is shutting down; try again shortly')
