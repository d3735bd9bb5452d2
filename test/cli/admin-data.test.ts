import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database.ts'
import { tempDir } from '../harness.ts'
import { makeCli, removeHome } from './live.ts'

/**
 * `hark admin` finds the server's data as `hark serve` does (--data, HARK_DATA, the config file)
 * and never quietly makes a database no server uses: a sign-in link into one reaches nobody.
 */
const cli = makeCli()
const work = tempDir('hark-admin-data-')
afterAll(() => {
  removeHome(cli)
  rmSync(work, { recursive: true, force: true })
})

/** A data directory as a started server leaves it: its database made and migrated. */
function serverData(name: string): string {
  const dir = join(work, name)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  openDatabase(join(dir, 'hark.db')).close()
  return dir
}

/** An empty config file, so that the machine's own /etc/hark/hark.env is not read. */
const noConfig = join(work, 'empty.env')
writeFileSync(noConfig, '')

describe('hark admin: where the data is', () => {
  test('without --data, in a directory with no data: refused, nothing made in the checkout', async () => {
    const checkout = join(work, 'checkout')
    mkdirSync(checkout)
    for (const argv of [
      ['user', 'add', 'pat@example.com', '--owner', '--base-url', 'https://hark.example.com'],
      ['user', 'link', 'pat@example.com'],
      ['channel', 'add', '--user', 'pat@example.com'],
      ['token', 'add', '--user', 'pat@example.com'],
      ['vapid', 'rotate'],
    ]) {
      const r = await cli.run(['admin', ...argv], { cwd: checkout, env: { HARK_CONFIG: noConfig } })
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toBe(
        `hark: no Hark data at ${join(checkout, 'data')} (the default, ./data); pass --data DIR or --config FILE (the server's, e.g. /etc/hark/hark.env)\n`,
      )
      expect(existsSync(join(checkout, 'data'))).toBe(false)
    }
  })

  test('a config file naming the data (as the server reads it) is found from any directory', async () => {
    const data = serverData('configured')
    const config = join(work, 'hark.env')
    writeFileSync(config, `HARK_DATA=${data}\nHARK_BASE_URL=https://hark.example.com\n`)
    const elsewhere = join(work, 'elsewhere')
    mkdirSync(elsewhere)
    const r = await cli.run(['admin', 'user', 'add', 'pat@example.com', '--owner'], {
      cwd: elsewhere,
      env: { HARK_CONFIG: config },
    })
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(r.stdout.trim().split('\n').at(-1)).toStartWith('https://hark.example.com/enrol#')
    expect(existsSync(join(elsewhere, 'data'))).toBe(false)
    const db = openDatabase(join(data, 'hark.db'))
    try {
      const row = db.query('SELECT email FROM users').get() as { email: string }
      expect(row.email).toBe('pat@example.com')
    } finally {
      db.close()
    }
  })

  test('a named directory without data: refused, except for user add, which makes it and says so', async () => {
    const fresh = join(work, 'fresh')
    const link = await cli.run(['admin', 'user', 'link', 'pat@example.com', '--data', fresh], {
      env: { HARK_CONFIG: noConfig },
    })
    expect(link.code).toBe(2)
    expect(link.stderr).toContain(`no Hark data at ${fresh} (no hark.db): is the path right?`)
    expect(existsSync(fresh)).toBe(false)

    const add = await cli.run(
      ['admin', 'user', 'add', 'pat@example.com', '--owner', '--data', fresh],
      { env: { HARK_CONFIG: noConfig, HARK_BASE_URL: 'https://hark.example.com' } },
    )
    expect(add.code).toBe(0)
    expect(add.stderr).toBe(
      `hark: no Hark data at ${fresh} yet: making a new database there; start the server with HARK_DATA=${fresh} to use it.\n`,
    )
    expect(existsSync(join(fresh, 'hark.db'))).toBe(true)
    // Now there is data: no note.
    const again = await cli.run(['admin', 'user', 'link', 'pat@example.com', '--data', fresh], {
      env: { HARK_CONFIG: noConfig, HARK_BASE_URL: 'https://hark.example.com' },
    })
    expect(again.code).toBe(0)
    expect(again.stderr).toBe('')
  })

  test('a --base-url given is not called unset, even a localhost one', async () => {
    const data = serverData('local')
    const r = await cli.run(
      [
        'admin',
        'user',
        'add',
        'pat@example.com',
        '--data',
        data,
        '--base-url',
        'http://localhost:8080',
      ],
      { env: { HARK_CONFIG: noConfig } },
    )
    expect(r.code).toBe(0)
    expect(r.stdout).not.toContain('HARK_BASE_URL')
    expect(r.stdout.trim().split('\n').at(-1)).toStartWith('http://localhost:8080/enrol#')
    // Unset, the localhost guess is still pointed out.
    const unset = await cli.run(['admin', 'user', 'link', 'pat@example.com', '--data', data], {
      env: { HARK_CONFIG: noConfig },
    })
    expect(unset.stdout).toContain(
      'Note: the link uses http://localhost:8080; set HARK_BASE_URL (or --base-url) to the public URL.',
    )
  })
})
