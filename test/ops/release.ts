import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')
const built = new Map<string, Promise<string>>()
/**
 * One release build at a time: each runs scripts/build.ts, which rebuilds web/dist and
 * assets.gen.ts in place, and two at once (install-fixture.ts asks for two) could read the
 * other's half-written files.
 */
let building: Promise<unknown> = Promise.resolve()

/**
 * A throwaway minisign key pair for the test releases (made once, no password): install.sh is
 * pointed at its public key with HARK_RELEASE_PUBKEY. Returns the secret key's path.
 */
export function testSigningKey(name = 'test'): { secret: string; publicKey: string } {
  const dir = join(ROOT, 'dist', 'test-release', 'keys')
  const secret = join(dir, `${name}.key`)
  const pub = join(dir, `${name}.pub`)
  if (!existsSync(secret)) {
    mkdirSync(dir, { recursive: true })
    const made = Bun.spawnSync(['minisign', '-G', '-f', '-W', '-p', pub, '-s', secret], {
      stdout: 'pipe',
      stderr: 'pipe',
    })
    if (made.exitCode !== 0) throw new Error(`minisign -G failed: ${made.stderr.toString()}`)
  }
  const publicKey = readFileSync(pub, 'utf8').split('\n')[1]?.trim() ?? ''
  return { secret, publicKey }
}

/**
 * A release directory made by `scripts/release.ts` (under dist/test-release/, built once per
 * test run and shared by the test files): the real artifacts install.sh downloads.
 */
export function testRelease(version: string, targets = 'x64,x64-baseline,arm64'): Promise<string> {
  const key = `${version} ${targets}`
  let p = built.get(key)
  if (!p) {
    p = building.then(async () => {
      const out = join(ROOT, 'dist', 'test-release', version)
      const proc = Bun.spawn(
        [
          process.execPath,
          'scripts/release.ts',
          '--version',
          version,
          '--out',
          out,
          '--targets',
          targets,
          '--sign',
          testSigningKey().secret,
        ],
        { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' },
      )
      const [stdout, stderr, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ])
      if (code !== 0 || !existsSync(join(out, 'SHA256SUMS'))) {
        throw new Error(`release ${version} failed (${code}):\n${stdout}\n${stderr}`)
      }
      return out
    })
    building = p.catch(() => {})
    built.set(key, p)
  }
  return p
}

/**
 * Whether a test needing a system tool must be skipped: only outside CI, and loudly. In CI
 * (CI=true, set by .ci/run, which installs the tools) a missing tool fails the test instead.
 */
export function skipWithout(check: () => boolean, what: string): boolean {
  if (check() || process.env.CI) return false
  console.warn(`SKIPPED (not in CI): ${what} is missing; .ci/run installs it`)
  return true
}

/** Finds a tool on PATH; CI installs the missing ones (.ci/run). */
export function requireTool(name: string, pkg: string): string {
  const path = Bun.which(name)
  if (!path) {
    throw new Error(`${name} is missing: apt-get install -y ${pkg} (.ci/run does this in CI)`)
  }
  return path
}
