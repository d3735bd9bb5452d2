/**
 * The test runner behind `npm test`, `npm run test:e2e` and `npm run test:all` (issue 33).
 *
 *   bun scripts/test.ts fast|e2e|all [--workers N] [path filter...]
 *
 * fast: every test file that needs nothing but Bun, node_modules and dist/hark (no root, no
 *       network, nothing written outside the checkout and the OS temp dir), run by
 *       `bun test --parallel` across worker processes.
 * e2e:  the files that declare a need (scripts/test-parts.ts): browsers, Postgres, the real
 *       agent CLIs, S3, the container, the root install, the system tools. A file whose need is
 *       missing is skipped with a line saying what and how to get it, and counted as skipped;
 *       under CI=true a missing need is a failure instead.
 *
 * Then: the slowest files (the timing report), anything a test left running (ended, and
 * counted as a failure: scripts/test-reaper.ts), and one last line
 * `N passed, M failed, K skipped` with the totals of every part. Exits non-zero on any failure.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { AGENT_CLIS, CACHE, missing, need, ROOT } from './test-needs.ts'
import { classify, countTests, type TestFile, testFiles } from './test-parts.ts'
import { becomeSubreaper, endAll, leftovers } from './test-reaper.ts'

const args = process.argv.slice(2)
const mode = args[0]
if (mode !== 'fast' && mode !== 'e2e' && mode !== 'all') {
  console.error('usage: bun scripts/test.ts fast|e2e|all [--workers N] [path filter...]')
  process.exit(2)
}
const workersAt = args.indexOf('--workers')
const workers =
  Number(workersAt > 0 ? args[workersAt + 1] : process.env.HARK_TEST_WORKERS) ||
  Math.max(2, availableParallelism())
const filters = args.slice(1).filter((a, i, all) => a !== '--workers' && all[i - 1] !== '--workers')
const CI = process.env.CI === 'true' || process.env.CI === '1'
/** A whole part that runs this long has hung: it is stopped and counted as failed. */
const PART_LIMIT_MS = Number(process.env.HARK_TEST_PART_LIMIT_MS) || 40 * 60_000

interface Totals {
  passed: number
  failed: number
  skipped: number
}
const totals: Totals = { passed: 0, failed: 0, skipped: 0 }
const durations: { file: string; ms: number; part: string }[] = []
const problems: string[] = []
const running = new Set<number>()
const scratch = mkdtempSync(join(tmpdir(), 'hark-test-run-'))
const TIMINGS = join(CACHE, 'test-timings.json')

const reaping = becomeSubreaper(running)
if (!reaping) console.warn('test: cannot watch for processes left running (not Linux?)')
// Stopped (Ctrl-C, a CI timeout): the tests stop too, and what they started is ended.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, async () => {
    const stop = (signal: NodeJS.Signals) => {
      for (const pid of running) {
        try {
          process.kill(pid, signal)
        } catch {
          // Already ended.
        }
      }
    }
    stop('SIGTERM')
    await Bun.sleep(2000)
    stop('SIGKILL')
    running.clear()
    await endAll(leftovers(running))
    console.log(`test: stopped by ${sig}`)
    process.exit(130)
  })
}

const all = classify(ROOT, testFiles(ROOT)).filter(
  (f) => filters.length === 0 || filters.some((x) => f.path.includes(x)),
)
const started = performance.now()
if (mode === 'fast' || mode === 'all') await fastPart(all)
if (mode === 'e2e' || mode === 'all') await e2ePart(all)
await sweep()
report()

async function fastPart(files: TestFile[]): Promise<void> {
  const fast = files.filter((f) => f.needs.length === 0)
  console.log(`\n== npm test: ${fast.length} files, ${workers} workers ==`)
  // The store contract suites run on SQLite here; their Postgres half is in the e2e part.
  await runBun('fast', fast, { parallel: true, env: { HARK_TEST_ENGINES: 'sqlite' } })
}

async function e2ePart(files: TestFile[]): Promise<void> {
  const wanted = files.filter((f) => f.needs.length > 0 || f.also.length > 0)
  const needsOf = (f: TestFile) => (f.needs.length > 0 ? f.needs : f.also)
  console.log(`\n== npm run test:e2e: ${wanted.length} files ==`)
  if (wanted.some((f) => needsOf(f).includes('agent-clis'))) await agentClis()
  const runnable: TestFile[] = []
  for (const f of wanted) {
    const gone = missing(needsOf(f))
    if (gone.length === 0) {
      runnable.push(f)
      continue
    }
    const how = gone.map((n) => `${n}: ${need(n).get}`).join('; ')
    const tests = countTests(join(ROOT, f.path))
    if (CI) {
      totals.failed += 1
      problems.push(`${f.path}: needs ${how} (missing, and CI=true)`)
      console.log(`FAIL ${f.path}: needs ${gone.join(', ')}, missing in CI (${how})`)
    } else {
      totals.skipped += tests
      console.log(`SKIP ${f.path} (${tests} tests): needs ${gone.join(', ')}; get it: ${how}`)
    }
  }
  for (const n of new Set(runnable.flatMap(needsOf))) {
    const fetches = need(n).fetches
    if (fetches) console.log(`e2e: the files that need ${n} download ${fetches}`)
  }
  const serial = runnable.filter((f) => needsOf(f).some((n) => need(n).serial))
  const parallel = runnable.filter((f) => !serial.includes(f))
  // Cross-compiling the test releases fetches Bun runtimes: into the project's cache.
  const env = { HARK_TEST_ENGINES: 'postgres', BUN_INSTALL_CACHE_DIR: join(CACHE, 'bun') }
  await runBun('e2e', parallel, { parallel: true, env })
  // After, not beside: building a release rebuilds web/dist and src/server/webapp/assets.gen.ts
  // (scripts/build.ts), which every in-process server of the other files imports.
  await runBun('e2e serial', serial, { parallel: false, env })
}

/** The real Claude Code, Codex and Deno, into .cache/agent-clis (the script says so first). */
async function agentClis(): Promise<void> {
  const proc = Bun.spawn(['bash', join(import.meta.dir, 'agent-clis.sh')], {
    cwd: ROOT,
    env: { ...process.env, HARK_AGENT_CLIS: AGENT_CLIS },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  running.add(proc.pid)
  await proc.exited
  running.delete(proc.pid)
}

interface RunOptions {
  parallel: boolean
  env: Record<string, string>
}

async function runBun(part: string, files: TestFile[], options: RunOptions): Promise<void> {
  if (files.length === 0) return
  const timings = join(scratch, `${part.replace(/\W/g, '-')}.json`)
  if (existsSync(TIMINGS)) copyFileSync(TIMINGS, timings)
  const argv = [
    process.execPath,
    'test',
    '--timeout',
    '30000',
    `--timings=${timings}`,
    '--update-timings',
    ...(options.parallel ? [`--parallel=${Math.min(workers, files.length)}`, '--no-isolate'] : []),
    ...files.map((f) => f.path),
  ]
  const t0 = performance.now()
  const proc = Bun.spawn(argv, {
    cwd: ROOT,
    env: { ...process.env, ...options.env, HARK_AGENT_CLIS: AGENT_CLIS, HARK_TEST_CACHE: CACHE },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  running.add(proc.pid)
  const limit = setTimeout(() => {
    problems.push(`${part}: still running after ${PART_LIMIT_MS / 60_000} min, stopped`)
    proc.kill('SIGKILL')
  }, PART_LIMIT_MS)
  const chunks: string[] = []
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true })
      chunks.push(text)
      process.stdout.write(text)
    }
  }
  await Promise.all([pump(proc.stdout), pump(proc.stderr), proc.exited])
  clearTimeout(limit)
  running.delete(proc.pid)
  const output = chunks.join('')
  const count = (word: string) =>
    Number(
      output
        .match(new RegExp(`^ *(\\d+) ${word}$`, 'gm'))
        ?.at(-1)
        ?.trim()
        .split(' ')[0] ?? 0,
    )
  const [passed, failed, skipped] = [count('pass'), count('fail'), count('skip') + count('todo')]
  for (const name of failedTests(output)) problems.push(`${part}: ${name}`)
  totals.passed += passed
  totals.skipped += skipped
  totals.failed += failed
  if (proc.exitCode !== 0 && failed === 0) {
    // Bun failed without a failing test: an error between tests, a crash, or the time limit.
    totals.failed += 1
    problems.push(
      `${part}: bun test exited ${proc.exitCode ?? proc.signalCode} with no failed test`,
    )
  }
  console.log(
    `-- ${part}: ${passed} passed, ${failed} failed, ${skipped} skipped in ${seconds(performance.now() - t0)}`,
  )
  collectTimings(part, files, timings)
}

/**
 * Each failed test named with its file, for the last lines of the run: CI keeps only the tail
 * of a long output, and a failure above it would otherwise be a count without a name.
 */
function failedTests(output: string): string[] {
  // Bun repeats the failures in a recap after the last file's tests: each is named once, by
  // the file it ran in.
  const named = new Map<string, string>()
  let file = ''
  for (const line of output.split('\n')) {
    const header = /^(\S+\.test\.tsx?):$/.exec(line)
    if (header) file = header[1] ?? ''
    const failed = /^\(fail\) (.*?)(?: \[[\d.]+m?s\])?$/.exec(line)?.[1]
    if (failed !== undefined && !named.has(failed)) named.set(failed, file ? `${file}: ` : '')
  }
  return [...named].map(([name, file]) => `${file}${name}`)
}

function collectTimings(part: string, files: TestFile[], timings: string): void {
  if (!existsSync(timings)) return
  const measured = JSON.parse(readFileSync(timings, 'utf8')) as { files: Record<string, number> }
  for (const f of files) {
    const ms = measured.files[f.path.slice(2)]
    if (ms !== undefined) durations.push({ file: f.path.slice(2), ms, part })
  }
  // Kept for the next run: bun --parallel starts the slowest files first and balances by them.
  mkdirSync(CACHE, { recursive: true })
  const kept: { version: number; files: Record<string, number> } = existsSync(TIMINGS)
    ? JSON.parse(readFileSync(TIMINGS, 'utf8'))
    : { version: 1, files: {} }
  for (const d of durations) kept.files[d.file] = d.ms
  writeFileSync(TIMINGS, JSON.stringify(kept, null, 2))
}

/** Whatever a test left running: named, ended, and a failure. */
async function sweep(): Promise<void> {
  if (!reaping) return
  // A moment's grace: a server told to stop at its test process's exit may still be at it
  // (the Postgres cluster's wrapper removing its directory).
  let left = leftovers(running)
  for (let waited = 0; left.length > 0 && waited < 5000; waited += 100) {
    await Bun.sleep(100)
    left = leftovers(running)
  }
  if (left.length === 0) return
  for (const p of left) problems.push(`left running after its test: pid ${p.pid}: ${p.command}`)
  totals.failed += left.length
  await endAll(left)
}

function report(): void {
  rmSync(scratch, { recursive: true, force: true })
  const slowest = durations.sort((a, b) => b.ms - a.ms).slice(0, 15)
  if (slowest.length > 0) {
    console.log('\n== slowest test files (wall time in their worker) ==')
    for (const d of slowest) console.log(`${seconds(d.ms).padStart(8)}  ${d.file}  [${d.part}]`)
  }
  console.log(`\n== ${mode}: ${seconds(performance.now() - started)} in all ==`)
  for (const p of problems) console.log(`FAIL ${p}`)
  // The one closing line CI reads (.ci/run): the totals of every part.
  console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`)
  process.exit(totals.failed > 0 ? 1 : 0)
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}
