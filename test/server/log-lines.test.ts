import { expect, test } from 'bun:test'
import { join } from 'node:path'

const LOG = join(import.meta.dir, '..', '..', 'src', 'core', 'log.ts')

/** Runs `code` in a fresh Bun process with the log module as `log`; answers its stderr. */
async function stderrOf(code: string): Promise<{ stderr: string; exitCode: number }> {
  const proc = Bun.spawn(
    [process.execPath, '-e', `const log = await import(${JSON.stringify(LOG)});\n${code}`],
    { stdout: 'ignore', stderr: 'pipe' },
  )
  const stderr = await new Response(proc.stderr).text()
  return { stderr, exitCode: await proc.exited }
}

// The log gathers lines and writes them once per turn of the event loop (src/core/log.ts): none
// may be lost or reordered, also when the process exits in the same turn.
test('log lines gathered in one turn are all written, in order, even when the process exits at once', async () => {
  const { stderr, exitCode } = await stderrOf(`
    for (let i = 0; i < 3000; i++) log.stderrLogger.info('line ' + i)
    log.jsonLogger.warn('last')
    process.exit(3)`)
  expect(exitCode).toBe(3)
  const lines = stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(3001)
  expect(lines[0]).toMatch(/^\S+Z info line 0$/)
  expect(lines[2999]).toMatch(/ info line 2999$/)
  expect(JSON.parse(lines[3000] as string)).toMatchObject({ level: 'warn', msg: 'last' })
})

test('a line written straight to stderr after flushLog comes after the gathered ones', async () => {
  const { stderr } = await stderrOf(`
    log.stderrLogger.info('gathered')
    log.flushLog()
    process.stderr.write('fatal\\n')`)
  expect(
    stderr
      .trimEnd()
      .split('\n')
      .map((l) => l.split(' ').at(-1)),
  ).toEqual(['gathered', 'fatal'])
})
