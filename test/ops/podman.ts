// test-needs: root podman debootstrap
// (builds and runs the Containerfile with podman on a debootstrap base, as root. See scripts/test-parts.ts.)
import { afterAll, beforeAll } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { HARK, requireBinary } from '../binary/process.ts'
import { TEST_CACHE } from '../cache.ts'
import { tempDir } from '../harness.ts'
import { CONTAINERFILE, type Ran, sh } from './containerfile.ts'

/**
 * The image built from the Containerfile under podman (container-image.test.ts), from a local
 * Debian bookworm base (debootstrap from the Debian mirror, no container registry; cached in
 * .cache/container/ in the checkout), and what its tests run it with.
 */
const CACHE = join(TEST_CACHE, 'container')
/** A Debian bookworm minbase root file system, made once with debootstrap. */
const BASE_TAR = join(CACHE, 'debian-bookworm-minbase.tar')
const MIRROR = process.env.HARK_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian'

const id = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`
const BASE_IMAGE = `localhost/hark-test-base-${id}:bookworm`
export const IMAGE = `localhost/hark-test-${id}:latest`
export const VOLUME = `hark-test-data-${id}`
export const names = {
  first: `hark-test-${id}-a`,
  second: `hark-test-${id}-b`,
  probe: `hark-test-${id}-c`,
}
export const work = tempDir('hark-container-')
/** Flags every `podman run` gets here; chosen by the probe in beforeAll. */
export let runFlags: string[] = []
let skipReason: string | undefined
export const timings: Record<string, number> = {}

export const podman = (args: string[], timeoutMs = 60_000) => sh(['podman', ...args], timeoutMs)

export async function timed<T>(name: string, f: () => Promise<T>): Promise<T> {
  const started = performance.now()
  try {
    return await f()
  } finally {
    timings[name] = Math.round(performance.now() - started)
  }
}

export function must(r: Ran, what: string): string {
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

export const freePort = () => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port as number
  s.stop(true)
  return port
}

export async function waitHealthy(url: string, name: string) {
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

export const logsOf = async (name: string) => {
  const r = await podman(['logs', name])
  return `${r.out}${r.err}`
}

export function skipped(): boolean {
  if (skipReason) console.warn(`SKIPPED (container run): ${skipReason}`)
  return skipReason !== undefined
}
/**
 * Builds the image before the tests of the describe this is called in (or says why it cannot:
 * `skipped()`), and removes the containers, the volume and the images after them.
 */
export function useImage(): void {
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
}
