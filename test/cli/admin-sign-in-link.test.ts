import { afterEach, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { admin } from '../../src/cli/admin/index.ts'
import { UsageError } from '../../src/core/errors.ts'
import { hashToken } from '../../src/core/ids.ts'
import { openDatabase } from '../../src/db/database.ts'
import { openStores } from '../../src/server/context.ts'
import { tempDir } from '../harness.ts'

/** `hark admin user add` and `hark admin user link`: the sign-in links they print. */
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
/** A data directory as a started server leaves it (hark admin makes none: admin-data.test.ts). */
function dataDir(): string {
  const d = tempDir('hark-admin-link-')
  dirs.push(d)
  openDatabase(join(d, 'hark.db')).close()
  return d
}
async function hark(argv: string[], env: Record<string, string> = {}) {
  const lines: string[] = []
  const code = await admin(argv, env, (l) => lines.push(l))
  return { code, lines, last: lines.at(-1) ?? '' }
}
/** The sign-in link row behind `code`, read from the data directory's database. */
function linkRow(dir: string, code: string) {
  const db = openDatabase(join(dir, 'hark.db'))
  try {
    return openStores(db).signInLinks.byHash(hashToken(code))
  } finally {
    db.close()
  }
}
const secretOf = (link: string) => new URL(link).hash.slice(1)

describe('hark admin user add / user link', () => {
  test('user add prints a one-time sign-in link on the public URL, alone on the last line', async () => {
    const dir = dataDir()
    const r = await hark([
      'user',
      'add',
      'pat@example.com',
      '--data',
      dir,
      '--base-url',
      'https://hark.example.com/',
    ])
    expect(r.code).toBe(0)
    expect(r.lines[0]).toMatch(/^Added pat@example\.com \(usr_\w+\)\.$/)
    expect(r.lines.join('\n')).toContain('one-time, valid 24 hours')
    expect(r.last).toMatch(/^https:\/\/hark\.example\.com\/enrol#[0-9A-Za-z]{32}$/)
    expect(r.lines.join('\n')).not.toContain('Note:')
    const row = linkRow(dir, secretOf(r.last))
    expect(row?.used_at).toBeNull()
    expect((row?.expires_at ?? 0) - (row?.created_at ?? 0)).toBe(24 * 3600 * 1000)
  })

  test('the base URL comes from the config file like the server’s; the default localhost one is flagged', async () => {
    const dir = dataDir()
    const config = join(dir, 'hark.env')
    writeFileSync(config, `HARK_DATA=${dir}\nHARK_BASE_URL=https://chat.example.org\n`)
    const fromFile = await hark(['user', 'add', 'a@example.com', '--config', config])
    expect(fromFile.code).toBe(0)
    expect(fromFile.last).toStartWith('https://chat.example.org/enrol#')
    const fromEnv = await hark(['user', 'link', 'a@example.com', '--config', config], {
      HARK_BASE_URL: 'https://env.example.org',
    })
    expect(fromEnv.last).toStartWith('https://env.example.org/enrol#')
    const bare = await hark(['user', 'add', 'b@example.com', '--data', dir, '--port', '9090'])
    expect(bare.last).toStartWith('http://localhost:9090/enrol#')
    expect(bare.lines.join('\n')).toContain('Note: the link uses http://localhost:9090')
  })

  test('user link makes a new link and voids the earlier one', async () => {
    const dir = dataDir()
    const base = ['--data', dir, '--base-url', 'https://hark.example.com']
    const first = await hark(['user', 'add', 'pat@example.com', ...base])
    const second = await hark(['user', 'link', 'pat@example.com', ...base])
    expect(second.code).toBe(0)
    expect(second.lines).toHaveLength(2)
    expect(second.last).not.toBe(first.last)
    expect(linkRow(dir, secretOf(first.last))).toBeUndefined()
    expect(linkRow(dir, secretOf(second.last))?.used_at).toBeNull()
  })

  test('failures: an unknown person, a bad --base-url (nothing made), a missing EMAIL', async () => {
    const dir = dataDir()
    await expect(hark(['user', 'link', 'nobody@example.com', '--data', dir])).rejects.toThrow(
      'person nobody@example.com not found',
    )
    await expect(
      hark(['user', 'add', 'pat@example.com', '--data', dir, '--base-url', 'ftp://x']),
    ).rejects.toThrow('--base-url must use http or https')
    // The refused add made nobody: adding them now works.
    expect((await hark(['user', 'add', 'pat@example.com', '--data', dir])).code).toBe(0)
    await expect(hark(['user', 'link', '--data', dir])).rejects.toBeInstanceOf(UsageError)
    await expect(hark(['user', 'link', 'a@x.org', 'b@x.org', '--data', dir])).rejects.toThrow(
      'usage: hark admin user link EMAIL',
    )
  })
})
