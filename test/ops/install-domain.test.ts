import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../harness.ts'

/**
 * `install.sh --domain NAME` (issue 27): HTTPS on 443 with the certificate Hark gets itself.
 * Run into a temporary root with the local dist/hark (HARK_BINARY) and without systemd: what
 * it writes (hark.env, the unit) and what it prints. The server's side of --domain (ACME, the
 * listeners) is test/tls's, against pebble; starting the installed service with it needs ports
 * 80 and 443 and a name the CA can reach, which this machine has not.
 */
const REPO = join(import.meta.dir, '..', '..')
const HARK = join(REPO, 'dist', 'hark')
const work = tempDir('hark-install-domain-')
afterAll(() => rmSync(work, { recursive: true, force: true }))

let n = 0
async function install(args: string[], env: Record<string, string> = {}, root?: string) {
  if (!existsSync(HARK)) throw new Error('dist/hark is missing: run `bun run build` first')
  const dir = root ?? join(work, `root-${++n}`)
  const proc = Bun.spawn(['sh', join(REPO, 'install.sh'), ...args], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: work,
      HARK_ROOT: dir,
      HARK_BINARY: HARK,
      HARK_SKIP_SYSTEMD: '1',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 60_000,
  })
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  const read = (path: string) => readFileSync(join(dir, path), 'utf8')
  return {
    root: dir,
    out,
    err,
    code,
    envFile: () => read('etc/hark/hark.env'),
    unit: () => read('etc/systemd/system/hark.service'),
  }
}

const firstLink = (text: string) => /\bhttps?:\/\/[^\s]+/.exec(text)?.[0]
const CAP_LINES = [
  'CapabilityBoundingSet=CAP_NET_BIND_SERVICE',
  'AmbientCapabilities=CAP_NET_BIND_SERVICE',
]

describe('install.sh --domain', () => {
  test('writes HARK_DOMAIN (and the ACME email) into hark.env, the capability into the unit; the first link printed is https', async () => {
    const r = await install(['--domain', 'hark.example.com', '--acme-email', 'ops@example.com'])
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    const env = r.envFile()
    expect(env).toMatch(/^HARK_DOMAIN=hark\.example\.com$/m)
    expect(env).toMatch(/^HARK_ACME_EMAIL=ops@example\.com$/m)
    const unit = r.unit()
    for (const line of CAP_LINES) expect(unit).toContain(`\n${line}\n`)
    // Nothing else of the hardening changes: the unit is the plain one but for those two lines.
    const plain = readFileSync(join(REPO, 'deploy/hark.service'), 'utf8')
    expect(unit.replaceAll('=CAP_NET_BIND_SERVICE', '=')).toBe(plain)
    expect(firstLink(r.out)).toBe('https://hark.example.com')
    // The kernel keeps connections queued on a listener closed by a certificate swap.
    expect(readFileSync(join(r.root, 'etc/sysctl.d/60-hark.conf'), 'utf8')).toContain(
      'net.ipv4.tcp_migrate_req = 1',
    )
  }, 60_000)

  test('several names: the first is the address; --domain=NAME and HARK_DOMAIN work too', async () => {
    const r = await install(['--domain=hark.example.com,www.hark.example.com'])
    expect(r.code).toBe(0)
    expect(r.envFile()).toMatch(/^HARK_DOMAIN=hark\.example\.com,www\.hark\.example\.com$/m)
    expect(firstLink(r.out)).toBe('https://hark.example.com')
    const byEnv = await install([], { HARK_DOMAIN: 'env.example.com' })
    expect(byEnv.code).toBe(0)
    expect(byEnv.envFile()).toMatch(/^HARK_DOMAIN=env\.example\.com$/m)
    for (const line of CAP_LINES) expect(byEnv.unit()).toContain(`\n${line}\n`)
  }, 60_000)

  test('without --domain: no capability, and a later run with it adds HTTPS to the kept config', async () => {
    const plain = await install([])
    expect(plain.code).toBe(0)
    expect(plain.envFile()).not.toMatch(/^HARK_DOMAIN=/m)
    expect(plain.unit()).toBe(readFileSync(join(REPO, 'deploy/hark.service'), 'utf8'))
    expect(firstLink(plain.out)).toBeUndefined()
    expect(existsSync(join(plain.root, 'etc/sysctl.d/60-hark.conf'))).toBe(false)
    // The operator's own edits stay; only the one line is set.
    const envPath = join(plain.root, 'etc/hark/hark.env')
    writeFileSync(envPath, `${readFileSync(envPath, 'utf8')}HARK_WRITE_LIMIT=7\n`)
    const later = await install(['--domain', 'hark.example.com'], {}, plain.root)
    expect(later.code).toBe(0)
    expect(later.out).toContain('Set HARK_DOMAIN=hark.example.com in ')
    expect(later.envFile()).toMatch(/^HARK_DOMAIN=hark\.example\.com$/m)
    expect(later.envFile()).toContain('HARK_WRITE_LIMIT=7\n')
    for (const line of CAP_LINES) expect(later.unit()).toContain(`\n${line}\n`)
    expect(firstLink(later.out)).toBe('https://hark.example.com')
    // An upgrade run without the flag keeps HTTPS: the unit follows the configuration.
    const upgrade = await install([], {}, plain.root)
    expect(upgrade.code).toBe(0)
    for (const line of CAP_LINES) expect(upgrade.unit()).toContain(`\n${line}\n`)
  }, 60_000)

  test('a bad name or a stray argument is refused before anything is installed', async () => {
    for (const args of [['--domain', 'hark example.com'], ['--domain'], ['--bogus']]) {
      const r = await install(args)
      expect(r.code).toBe(1)
      expect(r.err).toMatch(/^install\.sh: /)
      expect(existsSync(join(r.root, 'usr/local/bin/hark'))).toBe(false)
    }
  }, 60_000)
})
