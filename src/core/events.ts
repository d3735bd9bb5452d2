/**
 * Events: what a unit of the write path did that other parts of the house react to (a message
 * created, a question settled), so the part that did it need not know them (docs/decisions.md,
 * "Events a unit emits"). A unit emits through its `tx` (`tx.emit`, core/write-path.ts); the
 * reactions run there and then, in the unit's own call chain and transaction: what they write
 * is kept or rolled back with the unit, and their `tx.after` effects run only once it is
 * durable. A unit (or a savepoint) that fails leaves nothing of its events behind.
 *
 * The kind of event is its `type`; core/ knows none of them (it imports no domain): each domain
 * names the events it emits, and the assembly (server/) registers who reacts to which.
 */
export interface Event {
  readonly type: string
}

/** What reacts to one kind of event, inside the emitting unit (`tx` is that unit's). */
export type Reaction<E, Tx> = (tx: Tx, event: E) => void | Promise<void>

/** Who reacts to which event: filled once by the assembly, read by every unit's `emit`. */
export class Reactions<E extends Event = Event, Tx = unknown> {
  // Stored without their types (`never`): a registry for one kind of `tx` is then usable where
  // any is expected (the engines' write paths know no stores); `on` typed them on the way in.
  private readonly byType = new Map<string, Reaction<never, never>[]>()

  /** `reaction` runs on every event of `type`, after those registered before it. */
  on<K extends E['type']>(type: K, reaction: Reaction<Extract<E, { type: K }>, Tx>): this {
    const list = this.byType.get(type) ?? []
    list.push(reaction as Reaction<never, never>)
    this.byType.set(type, list)
    return this
  }

  /**
   * Runs the reactions to `event`, one after another, in `tx`'s unit. A reaction that throws
   * fails the unit, as any of its own writes would: the event and its effects are one.
   */
  async dispatch(tx: Tx, event: E): Promise<void> {
    const list = this.byType.get(event.type)
    if (list === undefined) return
    for (const reaction of list) await (reaction as Reaction<E, Tx>)(tx, event)
  }
}

/** A write path's registry seen with the events and `tx` the assembly knows (one place). */
export const typed = <E extends Event, Tx>(reactions: Reactions): Reactions<E, Tx> =>
  reactions as unknown as Reactions<E, Tx>
