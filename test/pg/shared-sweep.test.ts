import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import type { Ctx } from '../../src/core/context.ts'
import type { Logger } from '../../src/core/log.ts'
import { closeContext } from '../../src/server/context.ts'
import { SWEEP_LOCK } from '../../src/server/pg/context.ts'
import { tempDir, until } from '../harness.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'
import { pgInstance } from './instance.ts'

/**
 * The orphan sweep when instances share the records (issue 20): an instance must not take
 * another's upload for an orphan (its bytes are stored a moment before its record), and one
 * instance sweeps at a time. In process, on the disk store (the S3 one lists the same way).
 */
const skip = skipWithoutPostgres()

let cluster: PgCluster
let url: string
const open: Ctx[] = []

function logger(lines: string[]): Logger {
  return {
    info: (m) => lines.push(m),
    warn: (m) => lines.push(m),
    error: (m) => lines.push(m),
  }
}

/** A stored file no record names, written `ageMs` ago. */
function orphan(dataDir: string, name: string, ageMs: number): string {
  const dir = join(dataDir, 'files', 'ch_orphans')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, name)
  writeFileSync(path, 'bytes')
  const at = (Date.now() - ageMs) / 1000
  utimesSync(path, at, at)
  return path
}

async function start(dataDir: string, lines: string[]): Promise<Ctx> {
  const ctx = await pgInstance(url, { dataDir }, { log: logger(lines) })
  open.push(ctx)
  return ctx
}

describe.skipIf(skip)('the orphan sweep on a shared database', () => {
  beforeAll(async () => {
    cluster = await startCluster()
    url = await cluster.database('sweep')
  }, 60_000)
  afterEach(async () => {
    for (const ctx of open.splice(0)) await closeContext(ctx)
  })
  afterAll(async () => {
    await cluster?.close()
  })

  test('removes orphans older than an hour, keeps younger ones (maybe an upload on its way)', async () => {
    const dir = tempDir('hark-sweep-')
    const old = orphan(dir, 'file_old', 2 * 3600_000)
    const young = orphan(dir, 'file_young', 10 * 60_000)
    const lines: string[] = []
    await start(dir, lines)
    await until(() => !existsSync(old), 10_000)
    expect(lines).toContain('removed orphan file ch_orphans/file_old')
    expect(existsSync(young)).toBe(true)
  })

  test('skips it while another instance sweeps (holds the advisory lock)', async () => {
    const other = new SQL(url, { max: 1 })
    const conn = await other.reserve()
    try {
      await conn`SELECT pg_advisory_lock(${SWEEP_LOCK})`
      const dir = tempDir('hark-sweep-')
      const old = orphan(dir, 'file_old', 2 * 3600_000)
      const lines: string[] = []
      await start(dir, lines)
      await until(
        () => lines.includes('orphan files: another instance is sweeping them; this one skips it'),
        10_000,
      )
      expect(existsSync(old)).toBe(true)
    } finally {
      conn.release()
      await other.close()
    }
  })
})
