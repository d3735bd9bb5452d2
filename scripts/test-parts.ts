import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/**
 * Which part of the suite a test file belongs to (issue 33). `npm test` runs every file that
 * needs nothing but Bun, node_modules and dist/hark; `npm run test:e2e` runs the files that
 * need something more (a browser, Postgres, an agent CLI, a system tool, root).
 *
 * A file says what it needs with a line comment, in itself or in any test module it imports
 * (followed through relative imports under test/):
 *
 *   // test-needs: chromium
 *
 * so a new file under test/web that uses the browser harness is an e2e file without anyone
 * listing it. `// test-also: postgres` marks a module that uses the need only optionally: the
 * files importing it run in `npm test` without it (SQLite) and again in the e2e part with it
 * (the store contract suites, whose test/stores/engines.ts imports test/pg/cluster.ts).
 */
export interface TestFile {
  /** Path relative to the repository, as bun test is given it (`./test/...`). */
  readonly path: string
  /** What it needs beyond Bun; empty for an `npm test` file. */
  readonly needs: readonly string[]
  /** Needs under which it runs a second time, in the e2e part. */
  readonly also: readonly string[]
}

const NEEDS = /^\/\/ test-needs: (.+)$/gm
const ALSO = /^\/\/ test-also: (.+)$/gm
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g

function words(source: string, marker: RegExp): string[] {
  const out: string[] = []
  for (const m of source.matchAll(marker)) out.push(...(m[1] ?? '').trim().split(/[\s,]+/))
  return out.filter(Boolean)
}

/** An import's file: as written, or with the extension Bun would add (`./agent-clis`). */
function resolveModule(path: string): string {
  for (const candidate of [path, `${path}.ts`, `${path}.tsx`, join(path, 'index.ts')]) {
    if (existsSync(candidate) && !statSync(candidate).isDirectory()) return candidate
  }
  return path
}

/**
 * Reads each file's own markers and those of the test modules it imports, transitively.
 * Modules outside `testRoot` (src/, node_modules) are not followed: markers live in tests.
 */
export function classify(root: string, files: string[], testRoot = join(root, 'test')): TestFile[] {
  const seen = new Map<string, { needs: Set<string>; also: Set<string> }>()
  const visit = (file: string, stack: Set<string>): { needs: Set<string>; also: Set<string> } => {
    const known = seen.get(file)
    if (known) return known
    const mine = { needs: new Set<string>(), also: new Set<string>() }
    if (stack.has(file) || !existsSync(file)) return mine // an import cycle, or not a file
    stack.add(file)
    const source = readFileSync(file, 'utf8')
    for (const n of words(source, NEEDS)) mine.needs.add(n)
    for (const n of words(source, ALSO)) mine.also.add(n)
    for (const m of source.matchAll(IMPORT)) {
      const target = resolveModule(resolve(dirname(file), m[1] ?? ''))
      if (relative(testRoot, target).startsWith('..')) continue
      const theirs = visit(target, stack)
      for (const n of theirs.needs) mine.needs.add(n)
      for (const n of theirs.also) mine.also.add(n)
    }
    // A module that uses a need only optionally (test-also) makes it optional for its
    // importers too, even though it imports the module that needs it.
    for (const n of words(source, ALSO)) mine.needs.delete(n)
    stack.delete(file)
    seen.set(file, mine)
    return mine
  }
  return files.sort().map((file) => {
    const abs = resolve(root, file)
    const { needs, also } = visit(abs, new Set())
    return {
      path: `./${relative(root, abs)}`,
      needs: [...needs].sort(),
      also: [...also].filter((n) => !needs.has(n)).sort(),
    }
  })
}

/** Every test file bun test would find under test/. */
export function testFiles(root: string): string[] {
  return [...new Bun.Glob('test/**/*.test.{ts,tsx}').scanSync({ cwd: root })]
}

/** How many tests a file defines, counted in its source: what a skipped file would have run. */
export function countTests(file: string): number {
  const calls = /^\s*(?:test|it)(?:\.(?:skipIf|if|todoIf|concurrent|serial|each)\([^)]*\))?\(/gm
  return readFileSync(file, 'utf8').match(calls)?.length ?? 0
}
