// test-needs: release
// (install.sh against a signed test release (cross-compiled, minisign). See scripts/test-parts.ts.)
import { afterAll, beforeAll } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../harness.ts'
import { testRelease, testSigningKey } from './release.ts'

/**
 * install.sh and hark-uninstall.sh against the real release artifacts, served by a local HTTP
 * server, into a temporary root (the install-*.test.ts files). systemctl is a stand-in that
 * really starts and stops the installed binary, so a run goes all the way to /health and the
 * setup link.
 */
export const REPO = join(import.meta.dir, '..', '..')
export const V1 = '0.0.0-ops.1'
export const V2 = '0.0.0-ops.2'

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

export interface Install {
  code: number
  out: string
  err: string
}

/** What the binary of `cannotStart` says to `serve --check`. */
export const NOSTART_SAYS =
  'hark: serve --check failed: the database has schema version 99, newer than this hark understands (14)'

export const freePort = () => {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = s.port
  s.stop(true)
  return String(port)
}

export function hasAvx2(): boolean {
  return /\bavx2\b/.test(readFileSync('/proc/cpuinfo', 'utf8'))
}

/**
 * The release server (v1 and v2, and v1's sums with v2's binaries under /tampered/) and a work
 * directory, for the tests of the file this is called in: the releases are built before them,
 * and the server, the work directory and every hark a stand-in systemctl started are gone after.
 * The server listens at once, so `base` is known while the tests are being defined.
 */
export function useReleaseServer() {
  const work = tempDir('hark-install-')
  const requests: string[] = []
  const started: number[] = []
  /** The two releases' directories, once built. */
  let r1 = ''
  let r2 = ''
  const server = Bun.serve({
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
      const dirs: Record<string, string> = { [V1]: r1, [V2]: r2 }
      const dir = dirs[version as string]
      if (!dir || !name || !existsSync(join(dir, name))) return new Response('no', { status: 404 })
      return new Response(Bun.file(join(dir, name)))
    },
  })
  const base = server.url.href.replace(/\/$/, '')

  beforeAll(async () => {
    ;[r1, r2] = await Promise.all([testRelease(V1), testRelease(V2, 'x64,x64-baseline')])
  }, 120_000)

  afterAll(() => {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    server.stop(true)
    rmSync(work, { recursive: true, force: true })
  })

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
      existsSync(join(fake, 'systemctl.log'))
        ? readFileSync(join(fake, 'systemctl.log'), 'utf8')
        : ''
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

  return { work, requests, base, install, fakeSystemd, cannotStart }
}
