// test-needs: release
// (install.sh against a signed test release (cross-compiled, minisign). See scripts/test-parts.ts.)
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import {
  freePort,
  hasAvx2,
  NOSTART_SAYS,
  REPO,
  useReleaseServer,
  V1,
  V2,
} from './install-fixture.ts'
import { requireTool, skipWithout, testSigningKey } from './release.ts'

/**
 * install.sh with systemd (a stand-in systemctl that really starts and stops the installed
 * binary), in one root, test after test: a fresh install, a re-run, an upgrade, the upgrades
 * refused or rolled back, a backup running meanwhile, and hark-uninstall.
 */
const { work, requests, base, install, fakeSystemd, cannotStart } = useReleaseServer()

describe('install.sh with systemd', () => {
  const sd = fakeSystemd('main')
  const port = freePort()
  const env = () => ({ ...sd.env, HARK_HOST: '127.0.0.1', HARK_PORT: port })
  const bin = () => join(sd.root, 'usr/local/bin/hark')
  const version = () => Bun.spawnSync([bin(), '--version']).stdout.toString().trim()

  test('fresh install: binary, user dirs, config, unit, started, healthy', async () => {
    const r = await install(sd.root, env())
    sd.track()
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    expect(version()).toBe(V1)
    expect(statSync(bin()).mode & 0o777).toBe(0o755)
    expect(existsSync(join(sd.root, 'usr/local/bin/hark-uninstall'))).toBe(true)
    const data = join(sd.root, 'var/lib/hark')
    expect(statSync(data).mode & 0o777).toBe(0o700)
    const envFile = join(sd.root, 'etc/hark/hark.env')
    expect(statSync(envFile).mode & 0o777).toBe(0o640)
    const template = readFileSync(join(REPO, 'deploy/hark.env'), 'utf8')
      .replace('HARK_DATA=/var/lib/hark', `HARK_DATA=${data}`)
      .replace('HARK_HOST=0.0.0.0', 'HARK_HOST=127.0.0.1')
      .replace('HARK_PORT=8080', `HARK_PORT=${port}`)
    expect(readFileSync(envFile, 'utf8')).toBe(template)
    const unit = readFileSync(join(sd.root, 'etc/systemd/system/hark.service'), 'utf8')
    expect(unit).toBe(readFileSync(join(REPO, 'deploy/hark.service'), 'utf8'))
    for (const u of ['hark-backup.service', 'hark-backup.timer']) {
      expect(readFileSync(join(sd.root, 'etc/systemd/system', u), 'utf8')).toBe(
        readFileSync(join(REPO, 'deploy', u), 'utf8'),
      )
    }
    expect(sd.log()).toBe(
      'daemon-reload\nenable hark.service\nenable --now hark-backup.timer\nis-active --quiet hark-backup.service\nrestart hark.service\n',
    )
    expect(r.out).toContain(`Installed hark ${V1}`)
    expect(r.out).toContain('Hark is running: http://localhost:')
    const setup = join(data, 'setup-token')
    if (existsSync(setup)) expect(r.out).toContain(readFileSync(setup, 'utf8').trim())
    const health = await fetch(`http://127.0.0.1:${port}/health`)
    expect(health.status).toBe(200)
    expect(requests).toContain(`/${V1}/hark-linux-x64${hasAvx2() ? '' : '-baseline'}`)
  }, 60_000)

  const noAnalyze = skipWithout(() => !!Bun.which('systemd-analyze'), 'systemd-analyze (systemd)')
  test.skipIf(noAnalyze)('the unit passes systemd-analyze verify', () => {
    const analyze = requireTool('systemd-analyze', 'systemd')
    const unitDir = join(work, 'verify')
    mkdirSync(unitDir, { recursive: true })
    // verify checks that ExecStart exists: point it at the installed binary.
    for (const u of ['hark.service', 'hark-backup.service', 'hark-backup.timer']) {
      const text = readFileSync(join(sd.root, 'etc/systemd/system', u), 'utf8')
      writeFileSync(join(unitDir, u), text.replace('/usr/local/bin/hark', bin()))
    }
    const r = Bun.spawnSync(
      [
        analyze,
        'verify',
        ...['hark.service', 'hark-backup.service', 'hark-backup.timer'].map((u) =>
          join(unitDir, u),
        ),
      ],
      { env: { ...process.env, SYSTEMD_LOG_LEVEL: 'warning' } },
    )
    const stderr = r.stderr.toString()
    expect(stderr.split('\n').filter((l) => l.includes('hark'))).toEqual([])
    expect(r.exitCode).toBe(0)
    const unit = readFileSync(join(sd.root, 'etc/systemd/system/hark.service'), 'utf8')
    for (const line of [
      'ProtectSystem=strict',
      'StateDirectory=hark',
      'NoNewPrivileges=yes',
      'PrivateTmp=yes',
      'LimitNOFILE=65536',
      'Restart=on-failure',
    ]) {
      expect(unit).toContain(`\n${line}\n`)
    }
    expect(unit).not.toMatch(/^MemoryDenyWriteExecute/m)
  })

  test('re-running the same version changes nothing and keeps the config', async () => {
    const envFile = join(sd.root, 'etc/hark/hark.env')
    writeFileSync(envFile, `${readFileSync(envFile, 'utf8')}HARK_WRITE_LIMIT=7\n`)
    const before = sd.pid()
    const r = await install(sd.root, env())
    sd.track()
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    expect(r.out).toContain(`hark ${V1} is already installed`)
    expect(r.out).toContain('Kept ')
    expect(
      sd
        .log()
        .split('\n')
        .filter((l) => l.includes('restart')),
    ).toHaveLength(1)
    expect(sd.pid()).toBe(before)
    expect(readFileSync(envFile, 'utf8')).toContain('HARK_WRITE_LIMIT=7\n')
  }, 60_000)

  test('upgrade: new binary, backup first, restart, data and config kept', async () => {
    const data = join(sd.root, 'var/lib/hark')
    const add = Bun.spawnSync([bin(), 'admin', 'user', 'add', 'me@example.com', '--data', data])
    expect(add.exitCode).toBe(0)
    const before = sd.pid()
    const r = await install(sd.root, { ...env(), HARK_VERSION: V2 })
    sd.track()
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    expect(r.out).toContain(`Upgraded hark ${V1} -> ${V2}`)
    expect(version()).toBe(V2)
    expect(sd.pid()).not.toBe(before)
    expect(
      sd
        .log()
        .split('\n')
        .filter((l) => l.includes('restart')),
    ).toHaveLength(2)
    expect(readFileSync(join(sd.root, 'etc/hark/hark.env'), 'utf8')).toContain('HARK_WRITE_LIMIT=7')
    const backups = readdirSync(join(data, 'backups'))
    expect(backups).toHaveLength(1)
    expect(r.out).toContain(`Backed up the data to ${join(data, 'backups', backups[0] as string)}`)
    const db = new Database(join(data, 'hark.db'), { readonly: true })
    expect(db.query('SELECT email FROM users').all()).toEqual([{ email: 'me@example.com' }])
    db.close()
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200)
  }, 60_000)

  test('an upgrade whose binary does not come up is rolled back to the previous one, saying so', async () => {
    const broken = join(work, 'broken')
    mkdirSync(broken, { recursive: true })
    // Runs `--version` and passes `serve --check`, but dies on `serve`: a build that starts
    // nowhere, though nothing it could check says so.
    writeFileSync(
      join(broken, 'hark'),
      '#!/bin/sh\ncase "$1 $*" in "--version "*) echo 9.9.9-broken ;; *--help*) echo "  --check" ;; *--check*) exit 0 ;; *) echo "boom" >&2; exit 1 ;; esac\n',
    )
    chmodSync(join(broken, 'hark'), 0o755)
    const r = await install(sd.root, {
      ...env(),
      HARK_BINARY: join(broken, 'hark'),
      HARK_HEALTH_WAIT: '3',
    })
    sd.track()
    expect(r.code).toBe(1)
    expect(r.out).toContain(`Upgraded hark ${V2} -> 9.9.9-broken`)
    expect(r.out).toContain(`hark 9.9.9-broken did not answer`)
    expect(r.out).toContain(`Rolled back: hark ${V2} is running again`)
    expect(version()).toBe(V2)
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200)
    // The lock is let go however the run ended.
    expect(existsSync(join(sd.root, 'run/lock/hark-install'))).toBe(false)
  }, 60_000)

  test('an upgrade whose binary fails serve --check is not installed; the running one stays', async () => {
    const restarts = () =>
      sd
        .log()
        .split('\n')
        .filter((l) => l.includes('restart')).length
    const before = { pid: sd.pid(), restarts: restarts() }
    const r = await install(sd.root, { ...env(), HARK_BINARY: cannotStart() })
    expect(r.code).toBe(1)
    expect(r.err).toBe(
      `install.sh: hark 9.9.9-nostart cannot start on this configuration and data, so it was not installed; hark ${V2} stays at ${bin()}. hark serve --check said:\n  ${NOSTART_SAYS}\n`,
    )
    expect(r.out).not.toContain('Upgraded')
    expect(version()).toBe(V2)
    expect(existsSync(`${bin()}.new`)).toBe(false)
    expect({ pid: sd.pid(), restarts: restarts() }).toEqual(before)
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200)
  }, 60_000)

  test('a backup running when install.sh starts finishes before the service restarts', async () => {
    const running = join(sd.root, '..', 'main-fake', 'backup-running')
    writeFileSync(running, '')
    const proc = Bun.spawn(['sh', join(REPO, 'install.sh')], {
      env: {
        ...env(),
        HOME: work,
        HARK_ROOT: sd.root,
        HARK_BASE_URL_DOWNLOAD: base,
        HARK_VERSION: V1,
        HARK_RELEASE_PUBKEY: testSigningKey().publicKey,
      },
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 90_000,
    })
    const out = new Response(proc.stdout).text()
    // The unit's own guard: no new backup starts while the installer holds its lock.
    const lock = join(sd.root, 'run/lock/hark-install')
    for (let i = 0; i < 300 && !sd.log().endsWith('is-active --quiet hark-backup.service\n'); i++)
      await Bun.sleep(50)
    await Bun.sleep(500)
    expect(existsSync(lock)).toBe(true)
    expect(sd.log().split('\n').at(-2)).toBe('is-active --quiet hark-backup.service')
    rmSync(running)
    expect(await proc.exited).toBe(0)
    sd.track()
    expect(await out).toContain('Waiting for the running backup (hark-backup.service) to finish')
    expect(sd.log().split('\n').at(-2)).toBe('restart hark.service')
    expect(version()).toBe(V1)
    expect(existsSync(lock)).toBe(false)
  }, 90_000)

  test('hark-uninstall keeps the configuration and the data unless --purge', async () => {
    const uninstall = join(sd.root, 'usr/local/bin/hark-uninstall')
    const config = readFileSync(join(sd.root, 'etc/hark/hark.env'), 'utf8')
    const r = await install(sd.root, env(), uninstall)
    expect(r.code).toBe(0)
    expect(existsSync(join(sd.root, 'usr/local/bin/hark'))).toBe(false)
    // The operator's settings stay as they were, for a later install to pick up.
    expect(readFileSync(join(sd.root, 'etc/hark/hark.env'), 'utf8')).toBe(config)
    expect(r.out).toContain('Kept the configuration')
    expect(existsSync(join(sd.root, 'etc/systemd/system/hark.service'))).toBe(false)
    expect(existsSync(join(sd.root, 'etc/systemd/system/hark-backup.timer'))).toBe(false)
    expect(sd.log()).toContain('disable --now hark-backup.timer')
    expect(existsSync(join(sd.root, 'var/lib/hark/hark.db'))).toBe(true)
    expect(sd.log()).toContain('disable --now hark.service')
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow()
    const purge = await install(sd.root, env(), join(REPO, 'hark-uninstall.sh'), ['--purge'])
    expect(purge.code).toBe(0)
    expect(existsSync(join(sd.root, 'var/lib/hark'))).toBe(false)
    expect(existsSync(join(sd.root, 'etc/hark'))).toBe(false)
  }, 60_000)
})
