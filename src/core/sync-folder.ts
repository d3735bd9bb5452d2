import { open } from 'node:fs/promises'

/**
 * fsync of a folder, on the thread pool: the names made in it (a file renamed into place, a new
 * folder) are durable once it returns. A file's own sync covers its bytes, not its name: until
 * the folder is synced, a power cut can take the name back.
 */
export async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, 'r')
  try {
    await folder.sync()
  } finally {
    await folder.close()
  }
}
