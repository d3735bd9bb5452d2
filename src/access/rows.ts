import { rowOf } from '../db/pg/twin.ts'

/**
 * The rows of a caller: the person (a `users` row) and, for an agent, the channel its token
 * opens. Defined here, in the layer that finds them from a token or a cookie (access's own
 * stores read them by a join, joined-store.ts), so access imports no domain above it; people/store.ts and
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

/** A user's and a channel's row on Postgres: their int8 columns become numbers again. */
export const pgUserRow = rowOf<UserRow>({ ints: ['created_at'] })
export const pgChannelRow = rowOf<ChannelRow>({ ints: ['created_at', 'updated_at', 'read_rid'] })
