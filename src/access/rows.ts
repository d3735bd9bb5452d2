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
 * A row of `T` as a join names its columns, `prefix.column` (the statement says
 * `u.id AS "user.id"`): access's stores read a caller's rows with the token or session they belong to.
 */
export type Prefixed<T, P extends string> = { [K in keyof T & string as `${P}.${K}`]: T[K] }

/**
 * The person in a joined row (`user.*`); undefined when a left join found none. Named field by
 * field: this runs on every request a guard checks, and copying by name is the cheap way.
 */
export const userIn = (r: Prefixed<UserRow, 'user'>): UserRow | undefined =>
  r['user.id'] === null
    ? undefined
    : {
        id: r['user.id'],
        email: r['user.email'],
        name: r['user.name'],
        is_owner: r['user.is_owner'],
        created_at: r['user.created_at'],
        email_verified: r['user.email_verified'],
      }

/** The channel in a joined row (`channel.*`); undefined when a left join found none. */
export const channelIn = (r: Prefixed<ChannelRow, 'channel'>): ChannelRow | undefined =>
  r['channel.id'] === null
    ? undefined
    : {
        id: r['channel.id'],
        user_id: r['channel.user_id'],
        label: r['channel.label'],
        created_at: r['channel.created_at'],
        updated_at: r['channel.updated_at'],
        read_rid: r['channel.read_rid'],
      }

/** A user's and a channel's row on Postgres: their int8 columns become numbers again. */
export const pgUserRow = rowOf<UserRow>({ ints: ['created_at'] })
export const pgChannelRow = rowOf<ChannelRow>({ ints: ['created_at', 'updated_at', 'read_rid'] })
