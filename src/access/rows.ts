import { rowOf } from '../db/pg/twin.ts'

/**
 * The rows of a caller: the person (a `users` row) and, for an agent, the channel its token
 * opens. Defined here, in the layer that finds them from a token or a cookie (access's own
 * stores read them by a join), so access imports no domain above it; people/store.ts and
 * channels/store.ts, which write those tables, re-export them.
 */
export interface UserRow {
  id: string
  email: string
  name: string | null
  is_owner: number
  created_at: number
  /** 1 when the address is proven the person's (see migration 005). */
  email_verified: number
}

export interface ChannelRow {
  id: string
  user_id: string
  label: string
  created_at: number
  updated_at: number
  /** The last message (rid) the person has read. */
  read_rid: number
}

/**
 * A joined row's parts: a column the statement named `table.column` goes to that table's part,
 * any other to the main part (''). A left join that found nothing gives a part whose `id` is null.
 */
export function joinedParts(row: object): Record<string, Record<string, unknown>> {
  const parts: Record<string, Record<string, unknown>> = { '': {} }
  for (const [name, value] of Object.entries(row)) {
    const dot = name.indexOf('.')
    const table = dot < 0 ? '' : name.slice(0, dot)
    parts[table] ??= {}
    ;(parts[table] as Record<string, unknown>)[dot < 0 ? name : name.slice(dot + 1)] = value
  }
  return parts
}

/** The part of `table`, or undefined when the join found none (its id is null). */
export const partOf = (
  parts: Record<string, Record<string, unknown>>,
  table: string,
): Record<string, unknown> | undefined => {
  const part = parts[table]
  return part && part.id !== null && part.id !== undefined ? part : undefined
}

/** A user's and a channel's row on Postgres: their int8 columns become numbers again. */
export const pgUserRow = rowOf<UserRow>({ ints: ['created_at'] })
export const pgChannelRow = rowOf<ChannelRow>({ ints: ['created_at', 'updated_at', 'read_rid'] })
