import type { ChannelRow, UserRow } from './rows.ts'

/*
 * How access's stores read a caller's rows by a join with the token or session they belong to,
 * on both engines (tokens/store.ts, sessions/store.ts and their Postgres twins): the select
 * list's SQL, and the rows read back out of a joined row.
 */

/**
 * A row of `T` as a join names its columns, `prefix.column` (the statement says
 * `u.id AS "user.id"`): access's stores read a caller's rows with the token or session they belong to.
 */
export type Prefixed<T, P extends string> = { [K in keyof T & string as `${P}.${K}`]: T[K] }

/**
 * A table's row inside a join, as access's stores read a caller's rows with the token or
 * session they belong to: the statement names each column `prefix.column` (`columns`: the SQL
 * of the select list, `u.id AS "user.id"`, ...), and `read` takes the row back out of a joined
 * row (undefined when a left join found none). One list of fields makes both, so the two never
 * disagree. The keys are made once: this runs on every request a guard checks on Postgres.
 */
function joined<T>(alias: string, prefix: string, fields: readonly (keyof T & string)[]) {
  const keys = fields.map((field) => [field, `${prefix}.${field}`] as const)
  const idKey = `${prefix}.id`
  return {
    columns: keys.map(([field, key]) => `${alias}.${field} AS "${key}"`).join(', '),
    read(r: Prefixed<T, string>): T | undefined {
      const row = r as Record<string, unknown>
      if (row[idKey] === null) return undefined
      const out: Record<string, unknown> = {}
      for (const [field, key] of keys) out[field] = row[key]
      return out as T
    },
  }
}

const USER_FIELDS = ['id', 'email', 'name', 'is_owner', 'created_at', 'email_verified'] as const
const CHANNEL_FIELDS = ['id', 'user_id', 'label', 'created_at', 'updated_at', 'read_rid'] as const
/** True only when `F` names every field of `T`: a field left out would be read as missing. */
type Complete<T, F extends readonly unknown[]> = [Exclude<keyof T, F[number]>] extends [never]
  ? true
  : false
const everyUserField: Complete<UserRow, typeof USER_FIELDS> = true
const everyChannelField: Complete<ChannelRow, typeof CHANNEL_FIELDS> = true

const joinedUser = everyUserField && joined<UserRow>('u', 'user', USER_FIELDS)
const joinedChannel = everyChannelField && joined<ChannelRow>('c', 'channel', CHANNEL_FIELDS)

/** The person's columns in a join whose `users` table is `u`; `userIn` reads them back. */
export const USER_COLUMNS = joinedUser.columns
/** The channel's columns in a join whose `channels` table is `c`; `channelIn` reads them back. */
export const CHANNEL_COLUMNS = joinedChannel.columns
/** The person in a joined row (`user.*`); undefined when a left join found none. */
export const userIn = (r: Prefixed<UserRow, 'user'>): UserRow | undefined => joinedUser.read(r)
/** The channel in a joined row (`channel.*`); undefined when a left join found none. */
export const channelIn = (r: Prefixed<ChannelRow, 'channel'>): ChannelRow | undefined =>
  joinedChannel.read(r)
