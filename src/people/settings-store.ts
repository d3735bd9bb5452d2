import type { Database } from 'bun:sqlite'

/** Server-wide key/value settings (registration mode, the setup token's hash). */
export function settingsStore(db: Database) {
  const q = {
    get: db.query<{ value: string }, [string]>('SELECT value FROM settings WHERE key = ?1'),
    set: db.query<null, [string, string]>(
      'INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2',
    ),
    remove: db.query<null, [string]>('DELETE FROM settings WHERE key = ?1'),
  }
  return {
    get: (key: string) => q.get.get(key)?.value,
    set: (key: string, value: string): void => {
      q.set.run(key, value)
    },
    remove: (key: string): void => {
      q.remove.run(key)
    },
  }
}

export type SettingsStore = ReturnType<typeof settingsStore>
