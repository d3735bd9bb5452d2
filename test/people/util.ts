import type { SqliteCtx as Ctx } from '../../src/server/context.ts'

/** Counts rows of `table` (optionally `WHERE where`), straight from the database. */
export function count(ctx: Ctx, table: string, where = '1', ...args: string[]): number {
  const row = ctx.db.query(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(...args)
  return (row as { n: number }).n
}

/** The error body's `field`, for 400s. */
export async function fieldOf(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { field?: string }).field
}

/** Settles with the promise's value, or `'pending'` if it is still open after `ms`. */
export async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export const DAY = 24 * 3600 * 1000
