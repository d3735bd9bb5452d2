// test-needs: release openssl
// (signed releases: minisign and openssl. See scripts/test-parts.ts.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import type { Server } from 'bun'
import { tempDir } from '../harness.ts'
import { requireTool, testRelease, testSigningKey } from './release.ts'

/**
 * Signed releases: scripts/release.ts signs SHA256SUMS with Debian's minisign, and install.sh
 * installs a download only when that signature verifies under the release key and names the
 * version asked for. Every refusal is tried with each of install.sh's verifiers: minisign, and
 * OpenSSL 3 for machines without it.
 */
const REPO = join(import.meta.dir, '..', '..')
const V1 = '0.0.0-ops.1'
const V2 = '0.0.0-ops.2'
const work = tempDir('hark-signed-')
/** URL prefix → release directory. */
const served = new Map<string, string>()
let server: Server<unknown>
let base = ''
let release = ''
let key = { secret: '', publicKey: '' }

/** A copy of the release whose files `change` may alter (binaries are linked, not copied). */
function variant(name: string, change: (dir: string) => void): void {
  const dir = join(work, 'variants', name)
  mkdirSync(dir, { recursive: true })
  for (const f of ['SHA256SUMS', 'SHA256SUMS.minisig', 'hark-uninstall.sh']) {
    copyFileSync(join(release, f), join(dir, f))
  }
  for (const f of ['hark-linux-x64', 'hark-linux-x64-baseline', 'hark-linux-arm64']) {
    symlinkSync(join(release, f), join(dir, f))
  }
  change(dir)
  served.set(name, dir)
}

beforeAll(async () => {
  requireTool('minisign', 'minisign')
  requireTool('openssl', 'openssl')
  release = await testRelease(V1)
  key = testSigningKey()
  served.set('good', release)
  // Signed by another key.
  variant('other-key', (dir) => {
    const sign = Bun.spawnSync([
      'minisign',
      '-S',
      '-s',
      testSigningKey('other').secret,
      '-m',
      join(dir, 'SHA256SUMS'),
      '-t',
      `hark ${V1} SHA256SUMS`,
    ])
    expect(sign.exitCode).toBe(0)
  })
  // The sums changed after signing (one hash swapped for another file's).
  variant('sums-changed', (dir) => {
    const lines = readFileSync(join(dir, 'SHA256SUMS'), 'utf8').trim().split('\n')
    const hashOf = (name: string) => lines.find((l) => l.endsWith(`  ${name}`))?.split(' ')[0]
    const fake = hashOf('hark-linux-arm64') as string
    const sums = lines.map((l) =>
      l.endsWith('  hark-linux-x64') || l.endsWith('  hark-linux-x64-baseline')
        ? `${fake}  ${l.split('  ')[1]}`
        : l,
    )
    writeFileSync(join(dir, 'SHA256SUMS'), `${sums.join('\n')}\n`)
  })
  // The signed comment rewritten to claim another version.
  variant('comment-changed', (dir) => {
    const sig = readFileSync(join(dir, 'SHA256SUMS.minisig'), 'utf8').split('\n')
    sig[2] = `trusted comment: hark ${V2} SHA256SUMS`
    writeFileSync(join(dir, 'SHA256SUMS.minisig'), sig.join('\n'))
  })
  variant('unsigned', (dir) => rmSync(join(dir, 'SHA256SUMS.minisig')))
  variant('garbage-signature', (dir) =>
    writeFileSync(join(dir, 'SHA256SUMS.minisig'), 'untrusted comment: x\nAAAA\nnot a comment\n'),
  )
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      // /PREFIX/VERSION/NAME: any version asked for gets the prefix's files (V1's).
      const [, prefix, , name] = new URL(request.url).pathname.split('/')
      const dir = served.get(prefix as string)
      if (!dir || !name || !existsSync(join(dir, name))) return new Response('no', { status: 404 })
      return new Response(Bun.file(join(dir, name)))
    },
  })
  base = server.url.href.replace(/\/$/, '')
}, 180_000)

afterAll(() => {
  server?.stop(true)
  rmSync(work, { recursive: true, force: true })
})

let runs = 0
async function install(prefix: string, env: Record<string, string> = {}) {
  const root = join(work, `root-${++runs}`)
  const proc = Bun.spawn(['sh', join(REPO, 'install.sh')], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: work,
      HARK_ROOT: root,
      HARK_BASE_URL_DOWNLOAD: `${base}/${prefix}`,
      HARK_VERSION: V1,
      HARK_SKIP_SYSTEMD: '1',
      HARK_RELEASE_PUBKEY: key.publicKey,
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
  return { code, out, err, installed: existsSync(join(root, 'usr/local/bin/hark')), root }
}

describe('scripts/release.ts --sign', () => {
  test('SHA256SUMS.minisig verifies with minisign, its trusted comment naming the version', () => {
    const check = Bun.spawnSync([
      'minisign',
      '-V',
      '-m',
      join(release, 'SHA256SUMS'),
      '-P',
      key.publicKey,
    ])
    expect(check.exitCode).toBe(0)
    expect(check.stdout.toString()).toContain(`Trusted comment: hark ${V1} SHA256SUMS`)
  })
})

for (const verifier of ['minisign', 'openssl'] as const) {
  describe(`install.sh checks the signature (with ${verifier})`, () => {
    const env: Record<string, string> =
      verifier === 'openssl' ? { HARK_VERIFY_WITH: 'openssl' } : {}

    test('a release signed by the release key installs, saying so', async () => {
      const r = await install('good', env)
      expect(r.err).toBe('')
      expect(r.code).toBe(0)
      expect(r.out).toContain(`Verified the signature of SHA256SUMS (hark ${V1}`)
      expect(r.installed).toBe(true)
    })

    const refusals: [string, Record<string, string>, string][] = [
      ['other-key', {}, "does not verify under Hark's release key"],
      ['sums-changed', {}, "does not verify under Hark's release key"],
      ['comment-changed', {}, "does not verify under Hark's release key"],
      ['unsigned', {}, 'download failed'],
      ['garbage-signature', {}, 'not a minisign signature'],
      // A genuine older release offered for the version asked for.
      ['good', { HARK_VERSION: V2 }, `the signature is for hark ${V1}, not ${V2}`],
      // Signed by the test key, checked against Hark's own key (install.sh's default).
      ['good', { HARK_RELEASE_PUBKEY: '' }, "does not verify under Hark's release key"],
    ]
    for (const [prefix, extra, message] of refusals) {
      test(`refused, installing nothing: ${prefix} ${JSON.stringify(extra)}`, async () => {
        const r = await install(prefix, { ...env, ...extra })
        expect(r.code).toBe(1)
        expect(r.err).toContain(message)
        expect(r.installed).toBe(false)
        expect(existsSync(join(r.root, 'etc/hark'))).toBe(false)
      })
    }
  })
}

describe('the release key', () => {
  test('install.sh and the README carry the same public key', () => {
    const script = readFileSync(join(REPO, 'install.sh'), 'utf8')
    const inScript = /default_pubkey='(RW[A-Za-z0-9+/=]+)'/.exec(script)?.[1] as string
    expect(Buffer.from(inScript, 'base64')).toHaveLength(42)
    expect(readFileSync(join(REPO, 'README.md'), 'utf8')).toContain(inScript)
  })
})
