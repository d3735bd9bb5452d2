import type { SQL } from 'bun'
import type { PgTwin } from '../db/pg/twin.ts'
import type { SettingsStore } from './settings-store.ts'

/** people/settings-store.ts on Postgres (see db/pg/twin.ts); `sql` is a transaction. */
export function pgSettingsStore(sql: SQL): PgTwin<SettingsStore> {
  return {
    async get(key) {
      const [found] = await sql`SELECT value FROM settings WHERE key = ${key}`
      return found ? (found.value as string) : undefined
    },
    async set(key, value) {
      // ON CONFLICT is atomic on Postgres too: two instances setting one key at once end with
      // one row, the last to commit's value.
      await sql`
        INSERT INTO settings (key, value) VALUES (${key}, ${value})
        ON CONFLICT (key) DO UPDATE SET value = excluded.value`
    },
    async remove(key) {
      await sql`DELETE FROM settings WHERE key = ${key}`
    },
  }
}
