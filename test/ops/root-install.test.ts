// test-needs: root sudo release
// (installs Hark on this machine as root (install.sh) and removes it. See scripts/test-parts.ts.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { createAgentClient } from '../../src/agent/client.ts'
import { testRelease, testSigningKey } from './release.ts'

/**
 * install.sh as a self-hoster runs it: as root, on this machine, with no prefix: the real hark
 * user, /usr/local/bin, /etc/hark and /var/lib/hark. Then the README's own lines, as written,
 * for provisioning, backup and restore (only `systemctl stop/start hark` stand in by stopping and
 * starting the server the way the unit does, as the hark user: no systemd runs here). Then
 * `hark-uninstall --purge`, leaving the machine as it was found: the test refuses to start on a
 * machine that already has any of it.
 */
const REPO = join(import.meta.dir, '..', '..')
const V = '0.0.0-ops.1'
const PATHS = ['/usr/local/bin/hark', '/usr/local/bin/hark-uninstall', '/etc/hark', '/var/lib/hark']
const EXTRA = ['/var/lib/hark.before-restore', '/usr/local/bin/hark.previous']
const UNITS = ['hark.service', 'hark-backup.service', 'hark-backup.timer'].map(
  (u) => `/etc/systemd/system/${u}`,
)
const userExists = () => Bun.spawnSync(['id', 'hark']).exitCode === 0

/** Why this machine cannot run the test, or undefined. */
function unsuitable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root'
  for (const tool of ['useradd', 'userdel', 'runuser', 'sudo', 'getent']) {
    if (!Bun.which(tool)) return `${tool} is missing`
  }
  if (existsSync('/run/systemd/system')) return 'systemd runs here: install.sh would start units'
  const present = [...PATHS, ...EXTRA, ...UNITS].filter((p) => existsSync(p))
  if (userExists()) present.push('user hark')
  if (Bun.spawnSync(['getent', 'group', 'hark']).exitCode === 0) present.push('group hark')
  if (present.length > 0) return `Hark is already on this machine (${present.join(', ')})`
  return undefined
}
const why = unsuitable()
if (why && process.env.CI) throw new Error(`root install test cannot run in CI: ${why}`)
if (why) console.warn(`SKIPPED (not in CI): root install: ${why}`)

const port = (() => {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const p = s.port
  s.stop(true)
  return p
})()
const base = `http://127.0.0.1:${port}`
let server: Subprocess | undefined
let runCommand: string[] = []

function sh(line: string, env: Record<string, string> = {}) {
  const r = Bun.spawnSync(['sh', '-c', line], {
    env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', ...env },
    timeout: 60_000,
  })
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
}

async function healthy(): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return true
    } catch {}
    await Bun.sleep(50)
  }
  return false
}
/** `systemctl start hark`'s stand-in: the command install.sh printed (the unit's, as hark). */
async function start() {
  server = Bun.spawn(runCommand, { stdout: 'ignore', stderr: 'ignore' })
  expect(await healthy()).toBe(true)
}
/**
 * `systemctl stop hark`'s: SIGTERM, as the unit's KillSignal, and wait for the exit. runuser
 * passes the signal on, waits for hark, then ends by the same signal (143).
 */
async function stop() {
  server?.kill('SIGTERM')
  expect([0, 143]).toContain((await server?.exited) as number)
  server = undefined
  await expect(fetch(`${base}/health`)).rejects.toThrow()
}

/** The README's ```sh block lines under `heading`, comments dropped. */
function readmeLines(heading: string): string[] {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8')
  const section = readme.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? ''
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string)
  return blocks.flatMap((b) => b.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()))
}

function cleanUp() {
  server?.kill('SIGKILL')
  if (existsSync('/usr/local/bin/hark-uninstall')) sh('/usr/local/bin/hark-uninstall --purge')
  for (const p of [...PATHS, ...EXTRA, ...UNITS]) rmSync(p, { recursive: true, force: true })
  if (userExists()) sh('userdel hark')
  rmSync('/run/lock/hark-install', { recursive: true, force: true })
}

describe.skipIf(why !== undefined)(
  'install.sh as root on this machine, the README as written',
  () => {
    let agentToken = ''
    beforeAll(async () => {
      await testRelease(V)
    }, 300_000)
    afterAll(() => cleanUp())

    test('install: the hark user, the binary, config, data and units, and how to run it', async () => {
      const release = await testRelease(V)
      const r = sh(`sh ${join(REPO, 'install.sh')}`, {
        HARK_BINARY: join(release, 'hark-linux-x64-baseline'),
        HARK_RELEASE_PUBKEY: testSigningKey().publicKey,
        HARK_HOST: '127.0.0.1',
        HARK_PORT: String(port),
        HARK_BASE_URL: `http://localhost:${port}`,
      })
      expect(r.err).toBe('')
      expect(r.code).toBe(0)
      expect(r.out).toContain('Verified the signature of SHA256SUMS')
      expect(r.out).toContain('Created the system user hark.')
      expect(r.out).toContain('systemd is not running here')
      expect(userExists()).toBe(true)
      const uid = Number(sh('id -u hark').out.trim())
      expect(statSync('/var/lib/hark').uid).toBe(uid)
      expect(statSync('/var/lib/hark').mode & 0o777).toBe(0o700)
      expect(statSync('/etc/hark/hark.env').mode & 0o777).toBe(0o640)
      expect(statSync('/usr/local/bin/hark').mode & 0o777).toBe(0o755)
      for (const u of UNITS) expect(existsSync(u)).toBe(true)
      const printed = r.out.split('\n').find((l) => l.trim().startsWith('runuser ')) as string
      expect(printed.trim()).toBe(
        'runuser -u hark -- /usr/local/bin/hark serve --config /etc/hark/hark.env',
      )
      runCommand = printed.trim().split(/\s+/)
      await start()
    }, 120_000)

    test("the README's admin line provisions the owner, who gets a sign-in link", async () => {
      const readme = readFileSync(join(REPO, 'README.md'), 'utf8')
      const line = /`(sudo -u hark hark admin user add you@example\.com --owner)`/.exec(readme)?.[1]
      expect(line).toBeDefined()
      const r = sh(line as string)
      expect(r.code).toBe(0)
      expect(r.out.trim().split('\n').at(-1)).toStartWith(`http://localhost:${port}/enrol#`)
      const channel = sh('sudo -u hark hark admin channel add --user you@example.com --label CI')
      expect(channel.code).toBe(0)
      agentToken = channel.out.trim().split('\n').at(-1) as string
      const agent = createAgentClient({ baseUrl: base, token: agentToken })
      await agent.send({ body: { title: 'before the backup', text: 'kept' } })
      await agent.upload('notes.txt', 'a stored file', 'text/plain')
    }, 60_000)

    test("the README's backup and restore lines, as written, bring the data back", async () => {
      const [backupLine] = readmeLines('Backup and restore')
      expect(backupLine).toBe('sudo -u hark hark admin backup --dir /var/lib/hark/backups')
      const made = sh(backupLine as string)
      expect(made.err).toBe('')
      expect(made.code).toBe(0)
      const archives = readdirSync('/var/lib/hark/backups').filter((n) => n.endsWith('.tar'))
      expect(archives).toHaveLength(1)
      const archive = archives[0] as string
      // Written after the backup: gone after the restore.
      const agent = createAgentClient({ baseUrl: base, token: agentToken })
      await agent.send({ body: { title: 'after the backup' } })

      const restore = readmeLines('Backup and restore').slice(1).filter(Boolean)
      expect(restore).toHaveLength(5)
      for (const line of restore) {
        if (line === 'sudo systemctl stop hark') await stop()
        else if (line === 'sudo systemctl start hark') await start()
        else {
          // The README's example name stands for the archive the line above made.
          const r = sh(line.replace(/hark-\d{8}T\d{6}Z\.tar/, archive))
          expect(`${line}: ${r.err}`).toBe(`${line}: `)
          expect(r.code).toBe(0)
        }
      }
      const feed = await agent.feed({ since: 0 })
      expect(feed.messages.map((m) => ('body' in m ? m.body.title : undefined))).toEqual([
        'before the backup',
      ])
      const files = readdirSync('/var/lib/hark/files', { recursive: true })
      expect(files.length).toBeGreaterThan(0)
      expect(statSync('/var/lib/hark/hark.db').uid).toBe(Number(sh('id -u hark').out.trim()))
    }, 120_000)

    test('hark-uninstall --purge leaves the machine as it was found', async () => {
      await stop()
      const r = sh('/usr/local/bin/hark-uninstall --purge')
      expect(r.code).toBe(0)
      rmSync('/var/lib/hark.before-restore', { recursive: true, force: true })
      expect([...PATHS, ...UNITS].filter((p) => existsSync(p))).toEqual([])
      expect(userExists()).toBe(false)
      expect(existsSync('/run/lock/hark-install')).toBe(false)
    }, 60_000)
  },
)
