import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { requireBinary, type Served, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'

/**
 * Issue 31, item 5: `mkdir d` (0755) then `hark serve --data d` left hark.db, -wal and -shm
 * 0644, readable by every user of the machine (every message, the server's keys). Run against
 * dist/hark with the common umask 022, as an operator would.
 */
const root = tempDir('hark-modes-')
let umask = 0
beforeAll(() => {
  requireBinary()
  umask = process.umask(0o022)
})
afterAll(() => {
  process.umask(umask)
  rmSync(root, { recursive: true, force: true })
})

const modeOf = (path: string) => statSync(path).mode & 0o777
const dbFiles = (dir: string) => ['hark.db', 'hark.db-wal', 'hark.db-shm'].map((f) => join(dir, f))

/** Serves `dir` until it answers `/health` (the schema is migrated, the WAL files exist). */
async function served(dir: string, work: (s: Served) => void | Promise<void>): Promise<void> {
  const s = await startServe(['--data', dir])
  try {
    expect((await fetch(`${s.url}/health`)).status).toBe(200)
    await work(s)
  } finally {
    s.proc.kill('SIGTERM')
    await s.proc.exited
  }
}

test('serve --data on an existing 0755 directory: the database files are 0600, the directory 0700', async () => {
  const dir = join(root, 'made-by-mkdir')
  mkdirSync(dir, { mode: 0o755 })
  expect(modeOf(dir)).toBe(0o755)
  await served(dir, (s) => {
    for (const file of dbFiles(dir)) expect([file, modeOf(file)]).toEqual([file, 0o600])
    expect(modeOf(dir)).toBe(0o700)
    expect(modeOf(join(dir, 'files'))).toBe(0o700)
    expect(s.log()).toContain(`data directory ${dir} was open to other users (mode 0755)`)
  })
})

test('serve --data on a 0755 directory holding other files: left as it is, with a warning; the database files are 0600', async () => {
  const dir = join(root, 'shared')
  mkdirSync(dir, { mode: 0o755 })
  writeFileSync(join(dir, 'notes.txt'), 'the operator keeps this here\n')
  await served(dir, (s) => {
    for (const file of dbFiles(dir)) expect([file, modeOf(file)]).toEqual([file, 0o600])
    expect(modeOf(dir)).toBe(0o755)
    expect(s.log()).toContain(`data directory ${dir} is open to other users (mode 0755)`)
    expect(s.log()).toContain(`chmod 700 ${dir}`)
  })
})

test('serve --data over a database an older hark left 0644: it and its -wal and -shm become 0600', async () => {
  const dir = join(root, 'older')
  mkdirSync(dir, { mode: 0o700 })
  // What an older hark left: a WAL database whose three files are 0644.
  const old = new Database(join(dir, 'hark.db'), { create: true })
  old.run('PRAGMA journal_mode = WAL')
  old.run('CREATE TABLE t (x)')
  const files = dbFiles(dir)
  for (const file of files) chmodSync(file, 0o644)
  try {
    await served(dir, () => {
      for (const file of files) expect([file, modeOf(file)]).toEqual([file, 0o600])
    })
  } finally {
    old.close()
  }
})

test('a private data directory draws no warning', async () => {
  const dir = join(root, 'private')
  await served(dir, (s) => {
    expect(modeOf(dir)).toBe(0o700)
    for (const file of dbFiles(dir)) expect(modeOf(file)).toBe(0o600)
    expect(s.log()).not.toContain('open to other users')
  })
})
