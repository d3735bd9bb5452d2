import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * What each `// test-needs:` word means (scripts/test-parts.ts): how the runner checks it is
 * here, and how a person gets it. A word not listed is a command looked up on PATH (and in
 * /usr/sbin, where Debian puts debootstrap), installed by the Debian package of that name.
 *
 * The runner never installs a system package: .ci/run does (scripts/system-deps.sh), and
 * a contributor decides. Only the agent CLIs are fetched by the runner, from the npm registry
 * into the checkout's own .cache/ (scripts/agent-clis.sh), saying so first.
 */
export interface Need {
  readonly present: () => boolean
  /** What a person runs to get it. */
  readonly get: string
  /**
   * Files with this need run one after another, in one bun process after the parallel ones:
   * they share state on disk (dist/test-release, the machine's own /usr/local and users), or
   * need the machine's cores to themselves.
   */
  readonly serial?: boolean
  /** What the files that need it download, and where: said before they run. */
  readonly fetches?: string
}

/** The checkout whose test/ is run: this one (HARK_TEST_ROOT: the runner's own test's tree). */
export const ROOT = process.env.HARK_TEST_ROOT ?? join(import.meta.dir, '..')
/** The project's own cache: agent CLIs, the container base image, test timings. Gitignored. */
export const CACHE = process.env.HARK_TEST_CACHE ?? join(ROOT, '.cache')
export const AGENT_CLIS = process.env.HARK_AGENT_CLIS ?? join(CACHE, 'agent-clis')

const onPath = (name: string) => !!Bun.which(name) || existsSync(join('/usr/sbin', name))
const postgres = () => {
  const root = '/usr/lib/postgresql'
  return existsSync(root) && readdirSync(root).some((v) => existsSync(join(root, v, 'bin/initdb')))
}
const python = (module: string) =>
  existsSync('/usr/bin/python3') &&
  Bun.spawnSync(['/usr/bin/python3', '-c', `import ${module}`], {
    stdout: 'ignore',
    stderr: 'ignore',
  }).exitCode === 0
const apt = (...packages: string[]) => `apt-get install ${packages.join(' ')} (as root)`

const KNOWN: Record<string, Need> = {
  chromium: { present: () => existsSync('/usr/bin/chromium'), get: apt('chromium') },
  postgres: { present: postgres, get: apt('postgresql') },
  // Serial too: each run is a large native CLI whose hooks start Bun processes; beside the
  // browser files on 2 cores their runs outgrew the tests' bounds (20-25 s).
  'agent-clis': {
    serial: true,
    present: () =>
      ['claude', 'codex', 'deno'].every((b) =>
        existsSync(join(AGENT_CLIS, 'node_modules/.bin', b)),
      ),
    get: 'bash scripts/agent-clis.sh (npm, into .cache/agent-clis, about 860 MB)',
  },
  // s3rver is a devDependency run in process: here whenever node_modules is.
  s3: { present: () => true, get: 'npm install' },
  root: { present: () => process.getuid?.() === 0, get: 'run as root', serial: true },
  // Cross-compiled, signed test releases in dist/test-release/ (shared by the files that
  // need them); Bun fetches each target's runtime from the npm registry once.
  release: {
    present: () => onPath('minisign'),
    get: apt('minisign'),
    serial: true,
    fetches: `Bun's runtimes for the release targets, from the npm registry into ${join(CACHE, 'bun')} (once, about 500 MB)`,
  },
  debootstrap: {
    present: () => onPath('debootstrap'),
    get: apt('debootstrap'),
    fetches: `a Debian bookworm base from the Debian mirror into ${join(CACHE, 'container')} (once, about 75 MB)`,
  },
  'qemu-arm64': {
    present: () =>
      onPath('qemu-aarch64-static') &&
      existsSync('/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1'),
    get: apt('qemu-user-static', 'libc6-arm64-cross'),
  },
  python3: { present: () => onPath('python3'), get: apt('python3') },
  'python3-prometheus-client': {
    present: () => python('prometheus_client'),
    get: apt('python3-prometheus-client'),
  },
}

export function need(name: string): Need {
  return KNOWN[name] ?? { present: () => onPath(name), get: apt(name) }
}

/** The needs of a file that are not met here. */
export const missing = (needs: readonly string[]) => needs.filter((n) => !need(n).present())
