import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase, schemaVersion } from '../../src/db/database.ts'
import { latestVersion, migrations } from '../../src/db/migrations/index.ts'
import { makeCli, removeHome } from '../cli/live.ts'
import { tempDir } from '../harness.ts'

/**
 * `hark serve --check`: would the server start on this config and this data? install.sh runs it
 * with a new binary before putting it in place (issue 28, item 12); it must say yes only when
 * the config loads, the data opens and the schema upgrade applies, and write nothing live.
 */
const cli = makeCli()
const work = tempDir('hark-serve-check-')
afterAll(() => {
  removeHome(cli)
  rmSync(work, { recursive: true, force: true })
})

let n = 0
/** A config file naming a data directory (made by `prepare`, if given), as install.sh writes. */
function configured(prepare?: (data: string) => void): { config: string; data: string } {
  const dir = join(work, `case-${++n}`)
  const data = join(dir, 'data')
  mkdirSync(dir, { recursive: true })
  if (prepare) {
    mkdirSync(data, { mode: 0o700 })
    prepare(data)
  }
  const config = join(dir, 'hark.env')
  writeFileSync(config, `HARK_DATA=${data}\nHARK_PORT=8080\n`)
  return { config, data }
}

const check = (config: string, options: { unprivileged?: boolean } = {}) =>
  cli.run(['serve', '--config', config, '--check'], options)

/** A database as an older hark left it: the migrations up to `version` only. */
function olderDatabase(file: string, version: number): void {
  const db = new Database(file, { create: true, strict: true })
  db.run('PRAGMA journal_mode = WAL')
  for (const m of migrations.filter((m) => m.version <= version)) db.run(m.sql)
  db.run(`PRAGMA user_version = ${version}`)
  db.close()
}

describe('hark serve --check', () => {
  test('a good config and its data: exit 0, and it says what it checked', async () => {
    const { config, data } = configured((d) => openDatabase(join(d, 'hark.db')).close())
    const r = await check(config)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('would start (serve --check):')
    expect(r.stdout).toContain(`config: ${config}`)
    expect(r.stdout).toContain(
      `data: ${join(data, 'hark.db')}, schema ${latestVersion} (this hark's)`,
    )
  })

  test('no data yet (a first install): exit 0, nothing made', async () => {
    const { config, data } = configured()
    const r = await check(config)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`data: ${data} does not exist yet`)
    expect(existsSync(data)).toBe(false)
  })

  test('an older schema: the upgrade is tried on a copy; the live database is not touched', async () => {
    const older = latestVersion - 2
    const { config, data } = configured((d) => olderDatabase(join(d, 'hark.db'), older))
    const r = await check(config)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`schema ${older}; the upgrade to ${latestVersion} applies cleanly`)
    const db = new Database(join(data, 'hark.db'), { readonly: true })
    expect(schemaVersion(db)).toBe(older)
    db.close()
    expect(readdirSync(data).filter((f) => f.startsWith('.check-'))).toEqual([])
  })

  test('a database from a newer hark: exit 1, saying so', async () => {
    const { config } = configured((d) => {
      const db = openDatabase(join(d, 'hark.db'))
      db.run(`PRAGMA user_version = ${latestVersion + 1}`)
      db.close()
    })
    const r = await check(config)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(
      `hark: serve --check failed: the database has schema version ${latestVersion + 1}, newer than this hark understands (${latestVersion}); run a newer hark or restore a backup made by this version\n`,
    )
  })

  test('data that is not a database, or a schema whose upgrade fails: exit 1, saying so', async () => {
    const garbage = configured((d) => writeFileSync(join(d, 'hark.db'), 'x'.repeat(4096)))
    const r = await check(garbage.config)
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(
      `hark: serve --check failed: cannot read the database ${join(garbage.data, 'hark.db')}: file is not a database\n`,
    )
    // Tables of the latest schema under an old version number: the upgrade cannot apply.
    const clash = configured((d) => {
      const db = openDatabase(join(d, 'hark.db'))
      db.run('PRAGMA user_version = 1')
      db.close()
    })
    const failed = await check(clash.config)
    expect(failed.code).toBe(1)
    expect(failed.stderr).toStartWith(
      `hark: serve --check failed: the database's upgrade to schema ${latestVersion} fails: `,
    )
  })

  test('a data directory this user cannot read: exit 1, saying so', async () => {
    const { config, data } = configured((d) => openDatabase(join(d, 'hark.db')).close())
    chmodSync(data, 0o000)
    try {
      const r = await check(config, { unprivileged: true })
      expect(r.code).toBe(1)
      expect(r.stderr).toStartWith(
        `hark: serve --check failed: the data directory ${data} is not readable and writable by this user (EACCES)`,
      )
    } finally {
      chmodSync(data, 0o700)
    }
  })

  test('a bad setting: exit 2, naming it', async () => {
    const { config } = configured()
    writeFileSync(config, 'HARK_PORT=eighty\n')
    const r = await check(config)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('port')
  })
})
