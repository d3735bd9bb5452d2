import type { AsyncStores, Stores } from '../core/context.ts'

type Operation = (...args: unknown[]) => unknown

/**
 * SQLite's synchronous stores behind the async interface: each operation runs at once, on the
 * spot, and answers a settled promise (a throw becomes a rejection). About 150 ns a call.
 */
export function asyncStores(stores: Stores): AsyncStores {
  const out: Record<string, Record<string, Operation>> = {}
  for (const [name, store] of Object.entries(stores)) {
    const wrapped: Record<string, Operation> = {}
    for (const [op, fn] of Object.entries(store as Record<string, unknown>)) {
      if (typeof fn !== 'function') continue
      const call = fn as Operation
      wrapped[op] = async (...args) => call(...args)
    }
    out[name] = wrapped
  }
  return out as unknown as AsyncStores
}

/**
 * `ctx.store` where a unit's stores are not the ones outside it (Postgres: a pool outside, the
 * unit's transaction inside). Each call goes to the stores of the unit its async call chain
 * runs in, if any, else to `outside`: a helper a unit calls (a channel made, a token issued, a
 * key looked up) reads and writes in the unit's transaction whether it was handed `tx.store`
 * or `ctx.store`, so it sees the unit's writes and never waits on the unit's own row locks from
 * another connection (a deadlock no database would detect). On SQLite both are one connection
 * and `ctx.store` is the plain stores. One lookup in `AsyncLocalStorage` a call.
 */
export function routedStores(
  outside: AsyncStores,
  writes: { unitStore(): AsyncStores | undefined },
): AsyncStores {
  const out: Record<string, Record<string, Operation>> = {}
  for (const [name, store] of Object.entries(outside)) {
    const routed: Record<string, Operation> = {}
    for (const op of Object.keys(store as Record<string, unknown>)) {
      routed[op] = (...args) => {
        const here = (writes.unitStore() ?? outside) as unknown as Record<
          string,
          Record<string, Operation>
        >
        return here[name]![op]!(...args)
      }
    }
    out[name] = routed
  }
  return out as unknown as AsyncStores
}
