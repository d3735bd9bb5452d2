import type { Stores } from '../context.ts'

/**
 * A store's operations as the services call them: each answers a promise of its value, so one
 * service runs on either engine (issue 20): SQLite's stores through `asyncStores`, Postgres'
 * twins (db/pg/) natively.
 */
export type AsyncStore<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never
}

/** Every store, async, by the name `ctx.store` gives it. */
export type AsyncStores = { [K in keyof Stores]: AsyncStore<Stores[K]> }

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
