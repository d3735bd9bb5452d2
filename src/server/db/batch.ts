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
