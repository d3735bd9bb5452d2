/**
 * Builds the release artifacts into one directory (default `dist/release/<version>/`):
 *
 *   hark-linux-x64            x86-64 with AVX2 (Haswell and later)
 *   hark-linux-x64-baseline   x86-64 without AVX2 (older CPUs)
 *   hark-linux-arm64          aarch64 (Raspberry Pi 4/5, Graviton, Ampere)
 *   hark-darwin-arm64, hark-darwin-x64, hark-windows-x64.exe
 *                             the agent's side where agents run (a developer's Mac or Windows
 *                             machine): every client command; `serve` is tested on Linux only
 *   install.sh, hark-uninstall.sh
 *   SHA256SUMS                `sha256sum -c` format, over every file above
 *   SHA256SUMS.minisig        its minisign signature (with --sign), trusted comment
 *                             `hark V SHA256SUMS`: install.sh refuses a download without it
 *
 * Usage: bun scripts/release.ts [--version V] [--out DIR] [--targets x64,arm64,darwin-arm64,...]
 *                               [--sign SECRET_KEY_FILE]
 * --sign (or $HARK_SIGNING_KEY) signs with Debian's `minisign`; a key with a password reads it
 * from the terminal (or stdin). Without it the release is for local use only (HARK_BINARY).
 * The version defaults to $HARK_VERSION, else package.json's; it is stamped into each binary.
 * Cross-compiling fetches each target's Bun runtime from the npm registry once (then cached).
 */
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../package.json' with { type: 'json' }

export const TARGETS = {
  x64: { bun: 'bun-linux-x64-modern', file: 'hark-linux-x64' },
  'x64-baseline': { bun: 'bun-linux-x64-baseline', file: 'hark-linux-x64-baseline' },
  arm64: { bun: 'bun-linux-arm64', file: 'hark-linux-arm64' },
  'darwin-arm64': { bun: 'bun-darwin-arm64', file: 'hark-darwin-arm64' },
  'darwin-x64': { bun: 'bun-darwin-x64', file: 'hark-darwin-x64' },
  'windows-x64': { bun: 'bun-windows-x64', file: 'hark-windows-x64.exe' },
} as const
type Target = keyof typeof TARGETS

const root = join(import.meta.dir, '..')
const args = process.argv.slice(2)
const option = (name: string) => {
  const i = args.indexOf(name)
  return i === -1 ? undefined : args[i + 1]
}
const version = option('--version') ?? process.env.HARK_VERSION ?? pkg.version
if (!/^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(version)) {
  console.error(`release: "${version}" is not a version`)
  process.exit(2)
}
const out = option('--out') ?? join(root, 'dist', 'release', version)
const targets = (option('--targets') ?? Object.keys(TARGETS).join(',')).split(',') as Target[]
for (const t of targets) {
  if (!(t in TARGETS)) {
    console.error(`release: unknown target "${t}" (known: ${Object.keys(TARGETS).join(', ')})`)
    process.exit(2)
  }
}

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
for (const t of targets) {
  const outfile = join(out, TARGETS[t].file)
  const proc = Bun.spawnSync(
    [
      process.execPath,
      join(root, 'scripts', 'build.ts'),
      '--target',
      TARGETS[t].bun,
      '--outfile',
      outfile,
      '--version',
      version,
    ],
    { cwd: root, stdout: 'inherit', stderr: 'inherit' },
  )
  if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1)
  rmSync(`${outfile}.map`, { force: true })
}
for (const script of ['install.sh', 'hark-uninstall.sh']) {
  copyFileSync(join(root, script), join(out, script))
}

const sums: string[] = []
for (const name of readdirSync(out).sort()) {
  if (name === 'SHA256SUMS') continue
  const hash = createHash('sha256')
  for await (const chunk of Bun.file(join(out, name)).stream()) hash.update(chunk)
  sums.push(`${hash.digest('hex')}  ${name}`)
}
await Bun.write(join(out, 'SHA256SUMS'), `${sums.join('\n')}\n`)
console.log(`release ${version} in ${out}:\n${sums.join('\n')}`)

const signingKey = option('--sign') ?? process.env.HARK_SIGNING_KEY
if (signingKey) {
  if (!Bun.which('minisign')) {
    console.error('release: --sign needs minisign (apt-get install minisign)')
    process.exit(2)
  }
  // The trusted comment is signed too: install.sh checks it names the version it asked for, so
  // an older release's signed sums cannot be passed off as a newer one's.
  const sign = Bun.spawnSync(
    [
      'minisign',
      '-S',
      '-s',
      signingKey,
      '-m',
      join(out, 'SHA256SUMS'),
      '-t',
      `hark ${version} SHA256SUMS`,
    ],
    { stdin: 'inherit', stdout: 'inherit', stderr: 'inherit' },
  )
  if (sign.exitCode !== 0) {
    console.error('release: minisign failed; SHA256SUMS is not signed')
    rmSync(join(out, 'SHA256SUMS.minisig'), { force: true })
    process.exit(1)
  }
  console.log(`signed: ${join(out, 'SHA256SUMS.minisig')}`)
} else {
  console.log(
    'unsigned (no --sign KEY): install.sh will not download this release; HARK_BINARY only',
  )
}
