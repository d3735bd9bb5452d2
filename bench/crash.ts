/**
 * The long crash run: `dist/hark` under mixed writes (messages, questions and answers, pins,
 * uploads), killed with SIGKILL at a random moment, `--rounds` times; after each kill every
 * acknowledged write must be there, `PRAGMA integrity_check` ok, and after each restart no
 * partial or orphan file. The CI runs three rounds (test/durability/crash.test.ts).
 *
 *   bun bench/crash.ts [--rounds 20] [--min-ms 200] [--max-ms 3000] [--workers 8]
 */
import { rmSync } from 'node:fs'
import { crashLoop } from '../test/durability/crashloop.ts'
import { arg, tempDataDir } from './lib.ts'

const dir = tempDataDir('hark-crash-')
try {
  const started = performance.now()
  const summary = await crashLoop({
    dir,
    rounds: arg('rounds', 20),
    minMs: arg('min-ms', 200),
    maxMs: arg('max-ms', 3000),
    workers: arg('workers', 8),
    log: console.log,
  })
  const a = summary.acked
  console.log(
    `${summary.rounds} kill -9 rounds in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
      `${a.messages} messages, ${a.answers} answers, ${a.pins} pins, ${a.files} files acknowledged; ` +
      `${summary.failures.length === 0 ? 'all present, integrity ok, no partial or orphan files' : `${summary.failures.length} FAILURES`}`,
  )
  for (const f of summary.failures) console.log(`  ${f}`)
  process.exitCode = summary.failures.length === 0 ? 0 : 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
