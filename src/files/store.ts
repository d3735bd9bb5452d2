import type { Database } from 'bun:sqlite'

export interface FileRow {
  id: string
  channel_id: string
  name: string
  mime: string
  size: number
  sha256: string
  created_at: number
}

export type FileSum = Pick<FileRow, 'id' | 'channel_id' | 'size' | 'sha256'>

export function fileStore(db: Database) {
  const q = {
    insert: db.query<FileRow, [string, string, string, string, number, string, number]>(
      `INSERT INTO files (id, channel_id, name, mime, size, sha256, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING *`,
    ),
    inChannel: db.query<FileRow, [string, string]>(
      'SELECT * FROM files WHERE id = ?1 AND channel_id = ?2',
    ),
    allIds: db.query<{ id: string; channel_id: string }, []>('SELECT id, channel_id FROM files'),
    checksums: db.query<FileSum, []>(
      'SELECT id, channel_id, size, sha256 FROM files ORDER BY channel_id, id',
    ),
    usage: db.query<{ files: number; bytes: number }, [string]>(
      'SELECT count(*) AS files, coalesce(sum(size), 0) AS bytes FROM files WHERE channel_id = ?1',
    ),
    personBytes: db.query<{ bytes: number }, [string]>(
      `SELECT coalesce(sum(size), 0) AS bytes FROM files
       WHERE channel_id IN (SELECT id FROM channels WHERE user_id = ?1)`,
    ),
  }
  return {
    insert: (f: FileRow) =>
      q.insert.get(f.id, f.channel_id, f.name, f.mime, f.size, f.sha256, f.created_at) as FileRow,
    inChannel: (id: string, channelId: string) => q.inChannel.get(id, channelId) ?? undefined,
    allIds: () => q.allIds.all(),
    /** Every file with what its bytes must be (copying them elsewhere checks each). */
    checksums: () => q.checksums.all(),
    /** How many files a channel holds, and their bytes together. */
    usage: (channelId: string) => q.usage.get(channelId) ?? { files: 0, bytes: 0 },
    /** The bytes of all files of all of a person's channels. */
    personBytes: (userId: string) => q.personBytes.get(userId)?.bytes ?? 0,
  }
}

export type FileStore = ReturnType<typeof fileStore>
