import { chmodSync, closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname } from 'node:path'

/**
 * Files that must survive a power cut whole. A file's own sync covers its bytes, not the name
 * pointing at them: that is an entry of its folder, durable once the folder is synced. And a
 * new file's bytes may reach the disk well after its name (ext4 writes them up to 30 s later),
 * so a file renamed or linked into place unsynced can come back empty.
 */

/** fsync of a folder, on the thread pool: the names made in it are durable once it returns. */
export async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, 'r')
  try {
    await folder.sync()
  } finally {
    await folder.close()
  }
}

/** The same on this thread, for writes made at start-up or once in months (keys, certificates). */
export function syncFolderNow(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Writes `text` to `path` (`wx`: only if it does not exist yet) and syncs it before returning,
 * so that renaming or linking it into place next never puts an empty file there.
 */
export function writeFileSynced(
  path: string,
  text: string,
  options: { mode: number; flag: 'w' | 'wx' },
): void {
  const fd = openSync(path, options.flag, options.mode)
  try {
    const bytes = Buffer.from(text)
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Puts `text` at `path` whole, durably: written to a temporary file beside it and synced, given
 * `mode`, renamed over `path`, then its folder synced. A reader sees the old file or the new
 * one, and after a power cut so does the next start: never an empty or half-written one.
 */
export function replaceFileSynced(path: string, text: string, mode: number): void {
  const temporary = `${path}.${process.pid}.tmp`
  try {
    writeFileSynced(temporary, text, { mode, flag: 'w' })
    // The mode given at open passes through the umask, and only when the file is new (a
    // temporary file left by a crashed process of the same pid keeps its own).
    chmodSync(temporary, mode)
    renameSync(temporary, path)
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
  syncFolderNow(dirname(path))
}
