// test-needs: python3
// (the Python SDK run by python3. See scripts/test-parts.ts.)
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type SdkServer, startSdkServer } from './server.ts'

/**
 * The Python SDK (sdk/python, standard library only): its unittest suite run by `python3`
 * against a real `dist/hark serve`, so the suite (and CI) runs it.
 */
const PY = join(import.meta.dir, '..', '..', 'sdk', 'python')
const python = Bun.which('python3')

let server: SdkServer | undefined

beforeAll(async () => {
  if (python) server = await startSdkServer()
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

test.skipIf(!python)(
  'python3 -m unittest passes against dist/hark',
  async () => {
    const s = server!
    const proc = Bun.spawn(
      [python!, '-m', 'unittest', 'discover', '-v', '-s', 'tests', '-t', '.'],
      {
        cwd: PY,
        env: {
          ...process.env,
          HARK_URL: s.url,
          HARK_TOKEN: s.token,
          HARK_PERSON_TOKEN: s.personToken,
          PYTHONDONTWRITEBYTECODE: '1',
          NO_PROXY: '127.0.0.1,localhost',
          no_proxy: '127.0.0.1,localhost',
        },
        stdout: 'pipe',
        stderr: 'pipe',
        timeout: 120_000,
      },
    )
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    const report = `${stdout}${stderr}`
    if (code !== 0) console.error(report)
    expect(code).toBe(0)
    expect(report).toMatch(/\nOK\b/)
    // Every test ran: none skipped for want of the server.
    expect(report).not.toContain('skipped')
    expect(report).toContain('test_ask_returns_the_answer')
    // And what it shares with the TypeScript client (tests/test_parity.py).
    expect(report).toContain('test_a_429_does_not_end_a_wait_and_its_retry_after_is_honoured')
  },
  150_000,
)
