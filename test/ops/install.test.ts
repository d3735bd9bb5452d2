// test-needs: release
// (install.sh against a signed test release (cross-compiled, minisign). See scripts/test-parts.ts.)
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
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
import type { Server } from 'bun'
import { tempDir } from '../harness.ts'
import { requireTool, skipWithout, testRelease, testSigningKey } from './release.ts'

/**
 * install.sh and hark-uninstall.sh against the real release artifacts, served by a local HTTP
 * server, into a temporary root. systemctl is a stand-in that really starts and stops the
 * installed binary, so a run goes all the way to /health and the setup link.
 */
const REPO = join(import.meta.dir, '..', '..')
const V1 = '0.0.0-ops.1'
const V2 = '0.0.0-ops.2'
const work = tempDir('hark-install-')
const requests: string[] = []
let server: Server<unknown>
let base = ''
const started: number[] = []

const FAKE_SYSTEMCTL = `#!/bin/sh
# Stand-in for systemctl: logs its arguments and runs hark serve in the background.
echo "$*" >> "$FAKE_DIR/systemctl.log"
pidf="$FAKE_DIR/hark.pid"
running() { [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; }
stop() {
  if running; then
    pid=$(cat "$pidf"); kill "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$pidf"
}
case "$1" in
  # hark-backup.service runs while this file exists.
  is-active) [ -f "$FAKE_DIR/backup-running" ]; exit $? ;;
  start) running && exit 0 ;;
  restart) stop ;;
  stop | disable) stop; exit 0 ;;
  *) exit 0 ;;
esac
"$HARK_ROOT/usr/local/bin/hark" serve --config "$HARK_ROOT/etc/hark/hark.env" >>"$FAKE_DIR/hark.log" 2>&1 &
echo $! > "$pidf"
echo $! >> "$FAKE_DIR/pids"
`

beforeAll(async () => {
  const [r1, r2] = await Promise.all([testRelease(V1), testRelease(V2, 'x64,x64-baseline')])
  const dirs: Record<string, string> = { [V1]: r1, [V2]: r2 }
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname
      requests.push(path)
      // /tampered/V1/...: v1's signed SHA256SUMS with v2's binaries.
      if (path.startsWith('/tampered/')) {
        const name = path.split('/').at(-1) as string
        const from = name.startsWith('SHA256SUMS') || name === 'hark-uninstall.sh' ? r1 : r2
        return new Response(Bun.file(join(from, name)))
      }
      const [, version, name] = path.split('/')
      const dir = dirs[version as string]
      if (!dir || !name || !existsSync(join(dir, name))) return new Response('no', { status: 404 })
      return new Response(Bun.file(join(dir, name)))
    },
  })
  base = server.url.href.replace(/\/$/, '')
}, 120_000)

afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  server?.stop(true)
  rmSync(work, { recursive: true, force: true })
})

interface Install {
  code: number
  out: string
  err: string
}

async function install(
  root: string,
  env: Record<string, string>,
  script = join(REPO, 'install.sh'),
  args: string[] = [],
): Promise<Install> {
  const proc = Bun.spawn(['sh', script, ...args], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: work,
      HARK_ROOT: root,
      HARK_BASE_URL_DOWNLOAD: base,
      HARK_VERSION: V1,
      // The test releases are signed with a throwaway key (test/ops/release.ts).
      HARK_RELEASE_PUBKEY: testSigningKey().publicKey,
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 90_000,
  })
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, out, err }
}

/** A root with a stand-in systemctl first on PATH. */
function fakeSystemd(name: string) {
  const root = join(work, name)
  const fake = join(work, `${name}-fake`)
  mkdirSync(join(fake, 'bin'), { recursive: true })
  // What says systemd is running (install.sh looks for it under its root).
  mkdirSync(join(root, 'run/systemd/system'), { recursive: true })
  writeFileSync(join(fake, 'bin', 'systemctl'), FAKE_SYSTEMCTL)
  chmodSync(join(fake, 'bin', 'systemctl'), 0o755)
  const env = {
    PATH: `${join(fake, 'bin')}:${process.env.PATH}`,
    FAKE_DIR: fake,
  }
  const log = () =>
    existsSync(join(fake, 'systemctl.log')) ? readFileSync(join(fake, 'systemctl.log'), 'utf8') : ''
  const pid = () => Number(readFileSync(join(fake, 'hark.pid'), 'utf8'))
  const track = () => {
    if (existsSync(join(fake, 'pids'))) {
      for (const p of readFileSync(join(fake, 'pids'), 'utf8').split('\n')) {
        if (p) started.push(Number(p))
      }
    }
  }
  return { root, env, log, pid, track }
}

/** What the binary of `cannotStart` says to `serve --check`. */
const NOSTART_SAYS =
  'hark: serve --check failed: the database has schema version 99, newer than this hark understands (14)'

/**
 * A "new binary" that runs (`--version`, `serve --help`) but fails `serve --check`, as one that
 * cannot start on this data would: it must never replace a working one.
 */
function cannotStart(): string {
  const dir = join(work, 'nostart')
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, 'hark'),
    `#!/bin/sh\ncase "$1 $*" in "--version "*) echo 9.9.9-nostart ;; *--help*) echo "  --check" ;; *--check*) echo "${NOSTART_SAYS}" >&2; exit 1 ;; *) exit 1 ;; esac\n`,
  )
  chmodSync(join(dir, 'hark'), 0o755)
  return join(dir, 'hark')
}

const freePort = () => {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = s.port
  s.stop(true)
  return String(port)
}

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

function hasAvx2(): boolean {
  return /\bavx2\b/.test(readFileSync('/proc/cpuinfo', 'utf8'))
}

describe('install.sh without systemd, with a lock, and for the latest version', () => {
  test('systemctl present but systemd not running: installs, starts nothing, says how to run', async () => {
    const sd = fakeSystemd('no-systemd')
    rmSync(join(sd.root, 'run/systemd'), { recursive: true, force: true })
    const r = await install(sd.root, sd.env)
    expect(r.code).toBe(0)
    expect(r.out).toContain('systemd is not running here')
    expect(r.out).toContain(`${join(sd.root, 'usr/local/bin/hark')} serve --config`)
    expect(existsSync(join(sd.root, 'usr/local/bin/hark'))).toBe(true)
    expect(sd.log()).toBe('')
  })

  test('without systemd too, an upgrade is checked before the swap: a failing binary is not installed', async () => {
    const root = join(work, 'container')
    const bin = join(root, 'usr/local/bin/hark')
    const version = () => Bun.spawnSync([bin, '--version']).stdout.toString().trim()
    const first = await install(root, {})
    expect(first.code).toBe(0)
    expect(first.out).toContain(`Checked hark ${V1} against ${join(root, 'etc/hark/hark.env')}`)
    const data = join(root, 'var/lib/hark')
    expect(
      Bun.spawnSync([bin, 'admin', 'user', 'add', 'me@example.com', '--data', data]).exitCode,
    ).toBe(0)

    const refused = await install(root, { HARK_BINARY: cannotStart() })
    expect(refused.code).toBe(1)
    expect(refused.err).toContain(
      `hark 9.9.9-nostart cannot start on this configuration and data, so it was not installed; hark ${V1} stays at ${bin}`,
    )
    expect(refused.err).toContain(NOSTART_SAYS)
    expect(refused.out).not.toContain('Upgraded')
    expect(version()).toBe(V1)
    expect(existsSync(join(data, 'backups'))).toBe(false)

    const upgraded = await install(root, { HARK_VERSION: V2 })
    expect(upgraded.err).toBe('')
    expect(upgraded.code).toBe(0)
    expect(upgraded.out).toContain(`Checked hark ${V2}`)
    expect(upgraded.out).toContain(`Upgraded hark ${V1} -> ${V2}`)
    expect(upgraded.out).toContain(`a hark already running keeps ${V1} until it is restarted`)
    expect(version()).toBe(V2)
  }, 90_000)

  test('a second run while one holds the lock is refused before changing anything', async () => {
    const root = join(work, 'locked')
    mkdirSync(join(root, 'run/lock/hark-install'), { recursive: true })
    const r = await install(root, { HARK_SKIP_SYSTEMD: '1' })
    expect(r.code).toBe(1)
    expect(r.err).toContain('another install.sh or hark-uninstall is running')
    expect(existsSync(join(root, 'usr/local/bin/hark'))).toBe(false)
    expect(existsSync(join(root, 'etc/hark'))).toBe(false)
    // Not its lock: left for whoever holds it.
    expect(existsSync(join(root, 'run/lock/hark-install'))).toBe(true)
  })

  test('"latest" is fetched from GitHub\'s releases/latest/download/NAME', async () => {
    const fake = join(work, 'curl-fake')
    mkdirSync(fake, { recursive: true })
    writeFileSync(join(fake, 'curl'), `#!/bin/sh\necho "$@" >> ${fake}/urls\nexit 22\n`)
    chmodSync(join(fake, 'curl'), 0o755)
    const root = join(work, 'latest')
    const proc = Bun.spawn(['sh', join(REPO, 'install.sh')], {
      env: {
        PATH: `${fake}:${process.env.PATH}`,
        HOME: work,
        HARK_ROOT: root,
        HARK_SKIP_SYSTEMD: '1',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const err = await new Response(proc.stderr).text()
    expect(await proc.exited).toBe(1)
    expect(err).toContain(
      'download failed: https://github.com/hark/hark/releases/latest/download/SHA256SUMS',
    )
    expect(readFileSync(join(fake, 'urls'), 'utf8')).toContain(
      'https://github.com/hark/hark/releases/latest/download/SHA256SUMS',
    )
    expect(existsSync(join(root, 'usr/local/bin/hark'))).toBe(false)
  })
})

describe('install.sh refuses', () => {
  test('a checksum mismatch, installing nothing', async () => {
    const root = join(work, 'tampered')
    const r = await install(root, {
      HARK_SKIP_SYSTEMD: '1',
      HARK_BASE_URL_DOWNLOAD: `${base}/tampered`,
    })
    expect(r.code).toBe(1)
    expect(r.err).toContain('checksum mismatch for hark-linux-x64')
    expect(r.err).toContain('Nothing was installed')
    expect(existsSync(join(root, 'usr/local/bin/hark'))).toBe(false)
    expect(existsSync(join(root, 'etc/hark'))).toBe(false)
  })

  test('a download that fails', async () => {
    const r = await install(join(work, 'missing'), {
      HARK_SKIP_SYSTEMD: '1',
      HARK_VERSION: '9.9.9',
    })
    expect(r.code).toBe(1)
    expect(r.err).toContain(`download failed: ${base}/9.9.9/SHA256SUMS`)
  })

  test('unsupported architectures, before downloading anything', async () => {
    const cases: [string, string][] = [
      ['armv7l', '32-bit ARM (armv7l) is not supported'],
      ['armv6l', 'install Raspberry Pi OS (64-bit)'],
      ['i686', '32-bit x86 (i686) is not supported'],
      ['riscv64', 'unsupported architecture riscv64'],
    ]
    for (const [arch, message] of cases) {
      const seen = requests.length
      const r = await install(join(work, `arch-${arch}`), {
        HARK_SKIP_SYSTEMD: '1',
        HARK_ARCH: arch,
      })
      expect(r.code).toBe(1)
      expect(r.err).toContain(message)
      expect(requests.length).toBe(seen)
      expect(existsSync(join(work, `arch-${arch}`))).toBe(false)
    }
  })
})

describe('install.sh picks the binary for the machine', () => {
  const pick = async (name: string, env: Record<string, string>) => {
    const seen = requests.length
    const r = await install(join(work, name), { HARK_SKIP_SYSTEMD: '1', ...env })
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    return requests.slice(seen).filter((p) => p.includes('/hark-linux-'))
  }

  test('aarch64 gets arm64', async () => {
    expect(await pick('aarch64', { HARK_ARCH: 'aarch64' })).toEqual([`/${V1}/hark-linux-arm64`])
  })

  test('x86_64 with AVX2 gets x64, without it the baseline build', async () => {
    const cpu = join(work, 'cpuinfo')
    writeFileSync(cpu, 'flags\t\t: fpu sse sse2 avx avx2 bmi2\n')
    expect(await pick('avx2', { HARK_ARCH: 'x86_64', HARK_CPUINFO: cpu })).toEqual([
      `/${V1}/hark-linux-x64`,
    ])
    writeFileSync(cpu, 'flags\t\t: fpu sse sse2 avx\n')
    expect(await pick('noavx2', { HARK_ARCH: 'x86_64', HARK_CPUINFO: cpu })).toEqual([
      `/${V1}/hark-linux-x64-baseline`,
    ])
  })

  test('a local file, verified by the SHA256SUMS next to it', async () => {
    const release = await testRelease(V1)
    const root = join(work, 'local')
    const r = await install(root, {
      HARK_SKIP_SYSTEMD: '1',
      HARK_BINARY: join(release, 'hark-linux-x64-baseline'),
      HARK_BASE_URL_DOWNLOAD: 'http://127.0.0.1:9/unreachable',
    })
    expect(r.code).toBe(0)
    expect(r.out).toContain('Verified')
    expect(r.out).toContain('Skipped systemd')
    const copy = join(work, 'local-bad')
    mkdirSync(copy, { recursive: true })
    writeFileSync(join(copy, 'hark-linux-x64'), 'not hark')
    writeFileSync(join(copy, 'SHA256SUMS'), readFileSync(join(release, 'SHA256SUMS')))
    const bad = await install(join(work, 'local2'), {
      HARK_SKIP_SYSTEMD: '1',
      HARK_BINARY: join(copy, 'hark-linux-x64'),
    })
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('checksum mismatch')
  }, 60_000)
})
