import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { classify } from '../../scripts/test-parts.ts'
import { tempDir } from '../harness.ts'

/**
 * The test runner (issue 33): which part a file is in follows what it and its imports declare;
 * a file whose need is missing is a visible skip (a failure under CI=true); a process a test
 * leaves running is ended and counted as a failure; the closing line has the totals.
 */
/** Whether the process runs: a zombie (ended, not yet reaped by its new parent) does not. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

const RUNNER = join(import.meta.dir, '..', '..', 'scripts', 'test.ts')
const roots: string[] = []
afterAll(() => {
  for (const r of roots) Bun.spawnSync(['rm', '-rf', r])
})

/**
 * An import line for a fixture, made at run time: written out here, the classifier would
 * follow it from this very file to the real test/web/harness.ts.
 */
const load = (path: string) => `${['import', `'${path}'`].join(' ')}\n`
const reexport = (path: string) => `${['export { x } from', `'${path}'`].join(' ')}\n`

/** A checkout in miniature: files under test/ with the given contents. */
function tree(files: Record<string, string>): string {
  const root = tempDir('hark-runner-')
  roots.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

describe('scripts/test-parts.ts classify', () => {
  test('a need is inherited through imports, with or without the extension', () => {
    const root = tree({
      'test/web/harness.ts': '// test-needs: chromium\nexport const x = 1\n',
      'test/web/helper.ts': reexport('./harness'),
      'test/web/page.test.ts': load('./helper.ts'),
      'test/web/pure.test.ts': "import { expect } from 'bun:test'\n",
      'test/other/uses-browser.test.ts': load('../web/harness.ts'),
      'test/ops/tool.test.ts': '// test-needs: nginx root\n',
    })
    const parts = classify(root, [
      'test/web/page.test.ts',
      'test/web/pure.test.ts',
      'test/other/uses-browser.test.ts',
      'test/ops/tool.test.ts',
    ])
    expect(Object.fromEntries(parts.map((f) => [f.path, f.needs]))).toEqual({
      './test/web/page.test.ts': ['chromium'],
      './test/web/pure.test.ts': [],
      './test/other/uses-browser.test.ts': ['chromium'],
      './test/ops/tool.test.ts': ['nginx', 'root'],
    })
  })

  test('test-also makes a need optional for the importers, unless they need it themselves', () => {
    const root = tree({
      'test/pg/cluster.ts': '// test-needs: postgres\n',
      'test/stores/engines.ts': `// test-also: postgres\n${load('../pg/cluster.ts')}`,
      'test/stores/a.test.ts': load('../stores/engines.ts'),
      'test/pg/b.test.ts': load('../stores/engines.ts') + load('./cluster.ts'),
    })
    const [b, a] = classify(root, ['test/stores/a.test.ts', 'test/pg/b.test.ts']).sort((x, y) =>
      x.path.localeCompare(y.path),
    )
    expect(a).toEqual({ path: './test/stores/a.test.ts', needs: [], also: ['postgres'] })
    expect(b).toEqual({ path: './test/pg/b.test.ts', needs: ['postgres'], also: [] })
  })
})

describe('scripts/test.ts', () => {
  const files = {
    'test/fast/ok.test.ts':
      "import { expect, test } from 'bun:test'\ntest('ok', () => expect(1).toBe(1))\n",
    'test/e2e/tool.test.ts': [
      '// test-needs: hark-no-such-tool',
      "import { expect, test } from 'bun:test'",
      "test('one', () => expect(1).toBe(1))",
      "test('two', () => expect(1).toBe(1))",
      '',
    ].join('\n'),
  }
  const run = async (root: string, mode: string, env: Record<string, string> = {}) => {
    const proc = Bun.spawn([process.execPath, RUNNER, mode], {
      env: {
        ...process.env,
        CI: '',
        HARK_TEST_ROOT: root,
        HARK_TEST_CACHE: join(root, '.cache'),
        ...env,
      },
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 120_000,
    })
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    return { out: out + err, code, last: out.trim().split('\n').at(-1) }
  }

  test('a missing need is a SKIP line with its tests counted; under CI=true, a failure', async () => {
    const root = tree(files)
    const all = await run(root, 'all')
    expect(all.out).toContain('SKIP ./test/e2e/tool.test.ts (2 tests): needs hark-no-such-tool')
    expect(all.out).toContain('apt-get install hark-no-such-tool')
    expect(all.last).toBe('1 passed, 0 failed, 2 skipped')
    expect(all.code).toBe(0)

    const ci = await run(root, 'e2e', { CI: 'true' })
    expect(ci.out).toContain('FAIL ./test/e2e/tool.test.ts: needs hark-no-such-tool')
    expect(ci.last).toBe('0 passed, 1 failed, 0 skipped')
    expect(ci.code).toBe(1)
  }, 120_000)

  test('a process that outlived its parent and then ended is reaped: it no longer answers kill -0', async () => {
    // What install.sh's fake systemd does: start a server in the background, later stop it
    // and wait until `kill -0` says it is gone. Adopted by the runner, it must not stay a zombie.
    const root = tree({
      'test/fast/reaped.test.ts': [
        "import { expect, test } from 'bun:test'",
        "test('a stopped orphan is gone', async () => {",
        "  const started = Bun.spawnSync(['sh', '-c', 'sleep 300 </dev/null >/dev/null 2>&1 & echo $!'])",
        '  const pid = Number(started.stdout.toString().trim())',
        "  process.kill(pid, 'SIGTERM')",
        '  const gone = () => { try { process.kill(pid, 0); return false } catch { return true } }',
        '  for (let i = 0; i < 100 && !gone(); i++) await Bun.sleep(50)',
        '  expect(gone()).toBe(true)',
        '})',
        '',
      ].join('\n'),
    })
    const fast = await run(root, 'fast')
    expect(fast.last).toBe('1 passed, 0 failed, 0 skipped')
    expect(fast.code).toBe(0)
  }, 120_000)

  test('a process a test leaves running is named, ended and counted as a failure', async () => {
    const pidFile = join(tempDir('hark-runner-pid-'), 'pid')
    roots.push(join(pidFile, '..'))
    const root = tree({
      'test/fast/leaks.test.ts': [
        "import { expect, test } from 'bun:test'",
        "test('starts a daemon and forgets it', () => {",
        // Backgrounded by a shell that exits at once: the sleep is orphaned, as a server
        // whose test process died would be.
        `  Bun.spawnSync(['sh', '-c', 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > ${pidFile}'])`,
        '  expect(1).toBe(1)',
        '})',
        '',
      ].join('\n'),
    })
    const fast = await run(root, 'fast')
    const pid = Number(await Bun.file(pidFile).text())
    expect(fast.out).toContain(`FAIL left running after its test: pid ${pid}: sleep 300`)
    expect(fast.last).toBe('1 passed, 1 failed, 0 skipped')
    expect(fast.code).toBe(1)
    expect(running(pid)).toBe(false)
  }, 120_000)

  test('a failed test is named, with its file, in the lines above the totals', async () => {
    const root = tree({
      'test/fast/mixed.test.ts': [
        "import { beforeAll, describe, expect, test } from 'bun:test'",
        "test('holds', () => expect(1).toBe(1))",
        "test('breaks', () => expect(1).toBe(2))",
        "describe('set-up', () => {",
        "  beforeAll(() => { throw new Error('no server') })",
        "  test('never runs', () => expect(1).toBe(1))",
        '})',
        '',
      ].join('\n'),
      // Enough tests after the failures that Bun repeats them in a recap at the end.
      'test/fast/many.test.ts': [
        "import { expect, test } from 'bun:test'",
        ...Array.from({ length: 40 }, (_, i) => `test('passes ${i}', () => expect(1).toBe(1))`),
        '',
      ].join('\n'),
    })
    const fast = await run(root, 'fast')
    expect(fast.out).toContain('2 tests failed:')
    const tail = fast.out.trim().split('\n').slice(-3)
    expect(tail).toEqual([
      'FAIL fast: test/fast/mixed.test.ts: breaks',
      'FAIL fast: test/fast/mixed.test.ts: set-up > (unnamed)',
      '41 passed, 2 failed, 0 skipped',
    ])
    expect(fast.code).toBe(1)
  }, 120_000)
})
