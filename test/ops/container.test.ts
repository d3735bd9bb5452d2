// test-needs: root podman debootstrap
// (builds and runs the Containerfile with podman on a debootstrap base, as root. See scripts/test-parts.ts.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs'
import { join } from 'node:path'
import { HARK, requireBinary, run, startServe } from '../binary/process.ts'
import { TEST_CACHE } from '../cache.ts'
import { tempDir } from '../harness.ts'

/**
 * The Containerfile, as shipped. Always: its text is checked (a pinned base, a non-root user, the
 * /data volume, the health check) and its HEALTHCHECK command is run against a real
 * `dist/hark`. Where podman can run containers (rootful, as CI runs): the image is built from
 * a local Debian bookworm base (debootstrap from the Debian mirror, no container registry;
 * cached in .cache/container/ in the checkout) and run: non-root, /health on the mapped port, the
 * health check passing (and failing when nothing answers), the setup link in /data/setup-token,
 * data kept across a SIGTERM stop, a start and a new container on the same volume.
 */
const REPO = join(import.meta.dir, '..', '..')
const CONTAINERFILE = join(REPO, 'Containerfile')
const text = readFileSync(CONTAINERFILE, 'utf8')
/** The instructions, continuation lines joined, comments dropped. */
const instructions = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
const all = (keyword: string) =>
  instructions
    .filter((line) => line.split(/\s+/)[0]?.toUpperCase() === keyword)
    .map((line) => line.slice(keyword.length).trim())
const one = (keyword: string) => {
  const found = all(keyword)
  expect(found).toHaveLength(1)
  return found[0] as string
}

/** The HEALTHCHECK's command (exec form: a JSON array after CMD). */
const healthCommand = () => {
  const m = /\bCMD\s+(\[.*\])\s*$/.exec(one('HEALTHCHECK'))
  if (!m) throw new Error('HEALTHCHECK has no exec-form CMD')
  return JSON.parse(m[1] as string) as string[]
}

interface Ran {
  code: number
  out: string
  err: string
}

/** Runs a command to completion, killed after `timeoutMs`. */
async function sh(cmd: string[], timeoutMs = 60_000, env: Record<string, string> = {}) {
  const proc = Bun.spawn(cmd, {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: timeoutMs,
  })
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, out, err } satisfies Ran
}

describe('Containerfile', () => {
  test('a pinned base, overridable for a digest', () => {
    const arg = all('ARG').find((a) => a.startsWith('BASE='))
    expect(arg).toBeDefined()
    const base = (arg as string).slice('BASE='.length)
    // A Debian point release or a dated tag, optionally by digest; never latest or a bare suite.
    expect(base).toMatch(
      /^docker\.io\/library\/debian:(\d+\.\d+-slim|bookworm-\d{8}-slim)(@sha256:[0-9a-f]{64})?$/,
    )
    expect(one('FROM')).toBe(`\${BASE}`)
    // The comment says how a release pins by digest.
    expect(text).toContain('--build-arg BASE=')
    expect(text).toContain('@sha256:')
  })

  test('runs as a non-root user, keeps its data in the /data volume, the binary as entrypoint', () => {
    const user = one('USER')
    expect(user).toMatch(/^\d+:\d+$/)
    const [uid, gid] = user.split(':').map(Number)
    expect(uid).toBeGreaterThan(0)
    expect(gid).toBeGreaterThan(0)
    expect(instructions.some((line) => /^USER\s+(root|0)\b/i.test(line))).toBe(false)
    // The user is created, and owns /data, before the volume is declared.
    const runStep = one('RUN')
    expect(runStep).toContain(`useradd --system --uid ${uid}`)
    expect(runStep).toContain(`install -d -o ${uid} -g ${gid} -m 0700 /data`)
    expect(one('VOLUME')).toBe('/data')
    const env = one('ENV')
    expect(env).toContain('HARK_DATA=/data')
    expect(env).toContain('HARK_HOST=0.0.0.0')
    expect(env).toContain('HARK_PORT=8080')
    expect(one('EXPOSE')).toBe('8080')
    expect(one('STOPSIGNAL')).toBe('SIGTERM')
    expect(JSON.parse(one('ENTRYPOINT'))).toEqual(['/usr/local/bin/hark'])
    expect(JSON.parse(one('CMD'))).toEqual(['serve'])
    expect(one('COPY')).toBe(`\${HARK_BINARY} /usr/local/bin/hark`)
    // Nothing is downloaded while building: no package manager, no curl.
    expect(instructions.join('\n')).not.toMatch(/apt-get|apk |curl |wget /)
  })

  test('.dockerignore keeps the build context to the server binaries', () => {
    const lines = readFileSync(join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
    expect(lines[0]).toBe('*')
    expect(lines).toContain('!dist/hark')
    expect(lines).toContain('!dist/release/*/hark-linux-x64')
  })

  test('the HEALTHCHECK command: 0 while dist/hark answers /health, not 0 when nothing does', async () => {
    requireBinary()
    const cmd = healthCommand()
    expect(cmd[0]).toBe('bash')
    const data = tempDir('hark-container-health-')
    const served = await startServe(['--data', data])
    const port = new URL(served.url).port
    try {
      const up = await sh(cmd, 10_000, { HARK_PORT: port })
      expect(up).toMatchObject({ code: 0 })
    } finally {
      served.proc.kill('SIGTERM')
      await served.proc.exited
      rmSync(data, { recursive: true, force: true })
    }
    const down = await sh(cmd, 10_000, { HARK_PORT: port })
    expect(down.code).not.toBe(0)
  }, 60_000)
})

// ---------------------------------------------------------------------------------------------
// Built and run under podman.

const CACHE = join(TEST_CACHE, 'container')
/** A Debian bookworm minbase root file system, made once with debootstrap. */
const BASE_TAR = join(CACHE, 'debian-bookworm-minbase.tar')
const MIRROR = process.env.HARK_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian'

const id = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`
const BASE_IMAGE = `localhost/hark-test-base-${id}:bookworm`
const IMAGE = `localhost/hark-test-${id}:latest`
const VOLUME = `hark-test-data-${id}`
const names = {
  first: `hark-test-${id}-a`,
  second: `hark-test-${id}-b`,
  probe: `hark-test-${id}-c`,
}
const work = tempDir('hark-container-')
/** Flags every `podman run` gets here; chosen by the probe in beforeAll. */
let runFlags: string[] = []
let skipReason: string | undefined
const timings: Record<string, number> = {}

const podman = (args: string[], timeoutMs = 60_000) => sh(['podman', ...args], timeoutMs)

async function timed<T>(name: string, f: () => Promise<T>): Promise<T> {
  const started = performance.now()
  try {
    return await f()
  } finally {
    timings[name] = Math.round(performance.now() - started)
  }
}

function must(r: Ran, what: string): string {
  if (r.code !== 0) throw new Error(`${what} failed (${r.code}):\n${r.out}\n${r.err}`)
  return r.out
}

/** The base as a tar file, from the cache or made now (about 30 s to a few minutes). */
async function baseTarball(): Promise<string> {
  if (existsSync(BASE_TAR)) return BASE_TAR
  mkdirSync(CACHE, { recursive: true })
  const root = join(CACHE, `rootfs-${id}`)
  try {
    must(
      await sh(['debootstrap', '--variant=minbase', 'bookworm', root, MIRROR], 540_000),
      `debootstrap from ${MIRROR}`,
    )
    // What debian:*-slim leaves out too: the package cache and lists, documentation, locales.
    for (const dir of [
      'var/cache/apt/archives',
      'var/lib/apt/lists',
      'usr/share/doc',
      'usr/share/man',
      'usr/share/locale',
    ]) {
      rmSync(join(root, dir), { recursive: true, force: true })
      mkdirSync(join(root, dir), { recursive: true })
    }
    const partial = `${BASE_TAR}.${id}`
    must(await sh(['tar', '-C', root, '--numeric-owner', '-cf', partial, '.']), 'tar')
    renameSync(partial, BASE_TAR)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
  return BASE_TAR
}

/** The hard limit on open files here: a container may not be given more (no CAP_SYS_RESOURCE). */
async function openFilesLimit(): Promise<number> {
  const r = await sh(['sh', '-c', 'ulimit -Hn'])
  const n = Number(r.out.trim())
  return Number.isFinite(n) && n > 0 ? Math.min(n, 65536) : 65536
}

const freePort = () => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port as number
  s.stop(true)
  return port
}

async function waitHealthy(url: string, name: string) {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })
      if (r.status === 200) return (await r.json()) as unknown
    } catch {}
    await Bun.sleep(100)
  }
  const logs = await podman(['logs', name])
  throw new Error(`${name} did not answer ${url}/health in 30 s:\n${logs.out}${logs.err}`)
}

const logsOf = async (name: string) => {
  const r = await podman(['logs', name])
  return `${r.out}${r.err}`
}

function skipped(): boolean {
  if (skipReason) console.warn(`SKIPPED (container run): ${skipReason}`)
  return skipReason !== undefined
}

describe('the image under podman', () => {
  beforeAll(async () => {
    requireBinary()
    const missing = ['podman', 'debootstrap'].filter((tool) => !Bun.which(tool))
    if (missing.length > 0) {
      const what = `${missing.join(', ')} missing (apt-get install -y ${missing.join(' ')}; scripts/system-deps.sh)`
      if (process.env.CI) throw new Error(what)
      skipReason = what
      return
    }
    if (process.getuid?.() !== 0) {
      skipReason = 'needs root: rootful podman, and debootstrap for the base'
      return
    }
    const tar = await timed('base tarball', baseTarball)
    const imported = await timed('import base', () =>
      podman([
        'import',
        '--change',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change',
        'CMD ["bash"]',
        tar,
        BASE_IMAGE,
      ]),
    )
    if (imported.code !== 0) {
      // Its storage does not work here (an overlay inside an overlay, say).
      skipReason = `podman cannot store an image here: podman import: ${imported.err.trim()}`
      return
    }
    // Which runtime can start a container here. crun refuses hybrid cgroups (v1 and v2 mounted
    // together), runc does not; neither may raise a limit above the host's hard limit.
    const limits = ['--ulimit', `nofile=${await openFilesLimit()}`, '--ulimit', 'nproc=4096']
    const failures: string[] = []
    const runtimes = Bun.which('runc') ? [[], ['--runtime', 'runc']] : [[]]
    for (const runtime of runtimes) {
      const flags = [...runtime, ...limits]
      const probe = await podman(['run', '--rm', '--network', 'none', ...flags, BASE_IMAGE, 'true'])
      if (probe.code === 0) {
        runFlags = flags
        break
      }
      failures.push(`podman run ${flags.join(' ')}: ${probe.err.trim()}`)
    }
    if (runFlags.length === 0) {
      skipReason = `podman cannot start a container here:\n${failures.join('\n')}`
      return
    }
    // The build context holds only the binary, at the Containerfile's default HARK_BINARY.
    const context = join(work, 'context')
    mkdirSync(join(context, 'dist'), { recursive: true })
    copyFileSync(HARK, join(context, 'dist', 'hark'))
    must(
      await timed('build', () =>
        podman(
          [
            'build',
            // RUN steps in a chroot: no OCI runtime or cgroups needed while building.
            '--isolation',
            'chroot',
            // The Docker image format keeps HEALTHCHECK; OCI's has none.
            '--format',
            'docker',
            '--build-arg',
            `BASE=${BASE_IMAGE}`,
            '-t',
            IMAGE,
            '-f',
            CONTAINERFILE,
            context,
          ],
          300_000,
        ),
      ),
      'podman build',
    )
    rmSync(context, { recursive: true, force: true })
  }, 900_000)

  afterAll(async () => {
    if (Bun.which('podman')) {
      await podman(['rm', '--force', '--volumes', '--time', '0', ...Object.values(names)])
      await podman(['volume', 'rm', '--force', VOLUME])
      await podman(['rmi', '--force', IMAGE, BASE_IMAGE])
    }
    rmSync(work, { recursive: true, force: true })
    if (Object.keys(timings).length > 0) console.log('container test timings (ms):', timings)
  }, 120_000)

  test('the image: non-root user, /data volume, health check, entrypoint', async () => {
    if (skipped()) return
    const [image] = JSON.parse(must(await podman(['image', 'inspect', IMAGE]), 'inspect')) as {
      Config: Record<string, unknown>
      Healthcheck?: { Test: string[] }
    }[]
    expect(image?.Config).toMatchObject({
      User: '10001:10001',
      Volumes: { '/data': {} },
      WorkingDir: '/data',
      Entrypoint: ['/usr/local/bin/hark'],
      Cmd: ['serve'],
      StopSignal: 'SIGTERM',
      ExposedPorts: { '8080/tcp': {} },
    })
    expect(image?.Config.Env).toEqual(
      expect.arrayContaining(['HARK_DATA=/data', 'HARK_HOST=0.0.0.0', 'HARK_PORT=8080']),
    )
    expect(image?.Healthcheck?.Test).toEqual(['CMD', ...healthCommand()])
  })

  const port = freePort()
  const url = `http://127.0.0.1:${port}`
  let agentToken = ''
  let messageId = ''
  const agentEnv = () => ({
    HARK_URL: url,
    HARK_TOKEN: agentToken,
    XDG_CONFIG_HOME: join(work, 'config'),
  })
  const runFirst = () =>
    podman([
      'run',
      '--detach',
      '--name',
      names.first,
      ...runFlags,
      '--publish',
      `127.0.0.1:${port}:8080`,
      '--volume',
      `${VOLUME}:/data`,
      '--env',
      `HARK_BASE_URL=${url}`,
      IMAGE,
    ])

  test('first run: /health on the mapped port as uid 10001, the health check passes, the setup link is in /data/setup-token', async () => {
    if (skipped()) return
    must(await timed('run', runFirst), 'podman run')
    expect(await timed('until healthy', () => waitHealthy(url, names.first))).toEqual({ ok: true })

    // The server itself (PID 1 in the container) runs as the hark user, not root.
    const status = must(await podman(['exec', names.first, 'cat', '/proc/1/status']), 'exec')
    expect(status).toMatch(/^Uid:\s+10001\s+10001\s+10001\s+10001$/m)
    expect(status).toMatch(/^Gid:\s+10001\s+10001\s+10001\s+10001$/m)

    const health = await timed('healthcheck run', () => podman(['healthcheck', 'run', names.first]))
    expect(health).toMatchObject({ code: 0 })

    // Off a terminal the log names the file, never the link (a log outlives the terminal).
    const link = must(await podman(['exec', names.first, 'cat', '/data/setup-token']), 'exec cat')
    expect(link.trim()).toMatch(new RegExp(`^${url}/setup#token=[A-Za-z0-9]{32}$`))
    const log = await logsOf(names.first)
    expect(log).toContain('setup needed: the one-time setup link is in /data/setup-token')
    expect(log).not.toContain(link.trim().split('#token=')[1] as string)

    // On the host, the named volume holds the data, the user's own.
    const [mount] = JSON.parse(
      must(await podman(['container', 'inspect', '--format', '{{json .Mounts}}', names.first]), ''),
    ) as { Type: string; Name: string; Destination: string; Source: string }[]
    expect(mount).toMatchObject({ Type: 'volume', Name: VOLUME, Destination: '/data' })
    const token = statSync(join(mount?.Source as string, 'setup-token'))
    expect(token.uid).toBe(10001)
    expect(token.mode & 0o777).toBe(0o600)
    expect(statSync(join(mount?.Source as string, 'hark.db')).uid).toBe(10001)
  }, 120_000)

  test('hark admin in the container makes the owner and an agent token; the agent sends', async () => {
    if (skipped()) return
    const exec = (args: string[]) => podman(['exec', names.first, 'hark', 'admin', ...args])
    must(await exec(['user', 'add', 'owner@example.com', '--owner']), 'admin user add')
    const out = must(
      await exec(['channel', 'add', '--user', 'owner@example.com', '--label', 'Box']),
      'admin channel add',
    )
    agentToken = out.trim().split('\n').at(-1) as string
    expect(agentToken.length).toBeGreaterThan(20)
    const sent = await run(['send', 'before the restart', '--json'], agentEnv())
    expect(sent).toMatchObject({ code: 0 })
    messageId = (JSON.parse(sent.stdout) as { message: { id: string } }).message.id
    expect(messageId).toBeTruthy()
  }, 60_000)

  test('podman stop: SIGTERM, a clean exit 0 well within the 10 s timeout; start again with the data', async () => {
    if (skipped()) return
    const started = performance.now()
    must(await podman(['stop', '--time', '10', names.first]), 'podman stop')
    const ms = performance.now() - started
    timings.stop = Math.round(ms)
    expect(ms).toBeLessThan(8000)
    const exit = must(
      await podman(['container', 'inspect', '--format', '{{.State.ExitCode}}', names.first]),
      'inspect',
    )
    expect(exit.trim()).toBe('0')
    const log = await logsOf(names.first)
    expect(log).toContain('SIGTERM: shutting down')
    expect(log).toMatch(/info stopped\b/)

    must(await podman(['start', names.first]), 'podman start')
    await waitHealthy(url, names.first)
    const status = await run(['status', '--json'], agentEnv())
    expect(status).toMatchObject({ code: 0 })
    expect(status.stdout).toContain('Box')
  }, 60_000)

  test('a new container on the same volume keeps everything: the token works, the message is there, no setup', async () => {
    if (skipped()) return
    must(await podman(['rm', '--force', '--time', '10', names.first]), 'podman rm')
    must(
      await podman([
        'run',
        '--detach',
        '--name',
        names.second,
        ...runFlags,
        '--publish',
        `127.0.0.1:${port}:8080`,
        '--volume',
        `${VOLUME}:/data`,
        '--env',
        `HARK_BASE_URL=${url}`,
        IMAGE,
      ]),
      'podman run (second)',
    )
    await waitHealthy(url, names.second)
    const status = await run(['status', '--json'], agentEnv())
    expect(status).toMatchObject({ code: 0 })
    expect(status.stdout).toContain('Box')
    // Editing the message sent before needs it to still be there.
    const edited = await run(['edit', messageId, '--text', 'after a new container'], agentEnv())
    expect(edited).toMatchObject({ code: 0 })
    // With an owner, a start removes the setup link and asks for no setup.
    const log = await logsOf(names.second)
    expect(log).not.toContain('setup needed')
    expect((await podman(['exec', names.second, 'test', '-e', '/data/setup-token'])).code).toBe(1)
    expect(await podman(['healthcheck', 'run', names.second])).toMatchObject({ code: 0 })
  }, 60_000)

  test('without -v /data is still a volume; the health check fails when nothing answers on HARK_PORT', async () => {
    if (skipped()) return
    // Listening elsewhere than HARK_PORT: the check (which probes HARK_PORT) must say unhealthy.
    must(
      await podman([
        'run',
        '--detach',
        '--name',
        names.probe,
        ...runFlags,
        '--network',
        'none',
        IMAGE,
        'serve',
        '--port',
        '8081',
      ]),
      'podman run (probe)',
    )
    const deadline = Date.now() + 30_000
    while (!(await logsOf(names.probe)).includes('listening on') && Date.now() < deadline) {
      await Bun.sleep(100)
    }
    expect(await logsOf(names.probe)).toContain('listening on http://0.0.0.0:8081')
    const health = await podman(['healthcheck', 'run', names.probe])
    expect(health.code).not.toBe(0)
    const [mount] = JSON.parse(
      must(await podman(['container', 'inspect', '--format', '{{json .Mounts}}', names.probe]), ''),
    ) as { Type: string; Destination: string }[]
    expect(mount).toMatchObject({ Type: 'volume', Destination: '/data' })
    must(await podman(['rm', '--force', '--volumes', '--time', '10', names.probe]), 'podman rm')
  }, 60_000)
})
