import { accessSync, constants, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { open, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { syncFolder } from '../core/durable-files.ts'
import { randomBase62 } from '../core/ids.ts'
import {
  type BlobStore,
  BlobStoreError,
  type ByteRange,
  checkKey,
  type PutOptions,
  type Stored,
  streamChecked,
} from './blobs.ts'

const TMP = '.tmp'

/**
 * Files in the data directory: `files/<channel>/<file>`, owner-only (0700 folders, 0600
 * files). A write goes to `files/.tmp/` first, is synced and renamed into place, so a key
 * is whole or absent; what a crash leaves in `.tmp` is dropped at start.
 */
export class DiskBlobs implements BlobStore {
  readonly where: string

  constructor(readonly dir: string) {
    this.where = dir
    mkdirSync(join(dir, TMP), { recursive: true, mode: 0o700 })
  }

  private path = (key: string) => join(this.dir, ...checkKey(key).split('/'))

  async put(
    key: string,
    body: AsyncIterable<Uint8Array> | null,
    options: PutOptions,
  ): Promise<Stored> {
    const dest = this.path(key)
    const tmp = join(this.dir, TMP, `${key.replace('/', '.')}.${randomBase62(6)}`)
    const handle = await open(tmp, 'wx', 0o600)
    let stored: Stored
    try {
      stored = await streamChecked(key, body, options, (chunk) => handle.write(chunk))
      await handle.sync()
    } catch (error) {
      await handle.close()
      await rm(tmp, { force: true })
      throw error
    }
    await handle.close()
    const folder = join(dest, '..')
    let made: string | undefined
    try {
      made = mkdirSync(folder, { recursive: true, mode: 0o700 })
      await rename(tmp, dest)
    } catch (error) {
      await rm(tmp, { force: true })
      throw error
    }
    try {
      // The bytes are on disk; the name (and a new channel's folder) once their folders are
      // synced. Else a power cut could take the name back while the message naming the file,
      // committed next, stays. (A kill -9 cannot: the kernel keeps both.)
      await syncFolder(folder)
      if (made !== undefined) await syncFolder(this.dir)
    } catch (error) {
      await rm(dest, { force: true })
      throw error
    }
    return stored
  }

  async get(key: string, range?: ByteRange) {
    const file = Bun.file(this.path(key))
    if (!(await file.exists())) return undefined
    // A Bun file (or a slice of one) is sent by the kernel, not copied through JavaScript.
    return range ? file.slice(range.start, range.end) : file
  }

  // Removal is synchronous, as it always was: a deleted channel's folder is gone by the time
  // the deletion is answered.
  async delete(key: string): Promise<void> {
    rmSync(this.path(key), { force: true })
  }

  async deletePrefix(prefix: string): Promise<void> {
    const name = prefix.replace(/\/$/, '')
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new Error(`not a channel prefix: ${prefix}`)
    rmSync(join(this.dir, name), { recursive: true, force: true })
  }

  async *list(before?: number): AsyncIterable<string> {
    for (const dir of readdirSync(this.dir, { withFileTypes: true })) {
      if (!dir.isDirectory() || dir.name === TMP) continue
      for (const file of readdirSync(join(this.dir, dir.name))) {
        const key = `${dir.name}/${file}`
        if (before !== undefined && !this.writtenBefore(key, before)) continue
        yield key
      }
    }
  }

  /** False for a file gone meanwhile too: nothing to sweep. */
  private writtenBefore(key: string, before: number): boolean {
    try {
      return statSync(join(this.dir, key)).mtimeMs < before
    } catch {
      return false
    }
  }

  async dropPartial(): Promise<void> {
    rmSync(join(this.dir, TMP), { recursive: true, force: true })
    mkdirSync(join(this.dir, TMP), { recursive: true, mode: 0o700 })
  }

  async check(): Promise<void> {
    try {
      accessSync(this.dir, constants.W_OK | constants.R_OK)
    } catch (error) {
      throw new BlobStoreError(
        `the files directory ${this.dir} is not writable (${(error as NodeJS.ErrnoException).code ?? error})`,
      )
    }
  }
}
