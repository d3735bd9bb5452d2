import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAgentClient } from '../../src/agent/client.ts'
import { encryptSecret, fingerprint } from '../../src/shared/secret-crypto.ts'
import { canary, captureLog, expectNoPlaintext } from '../secrets/canary.ts'
import { liveCli, type Spawned } from './live.ts'

const log = captureLog()
const live = liveCli({ log })

/** Starts `hark secret ...`; resolves once it printed its request id and fingerprint. */
async function requesting(args: string[]): Promise<{ run: Spawned; id: string; print: string }> {
  // Plumbing: the person here fulfils with no passkey; test/trust/secrets.test.ts signs.
  const run = live.cli.spawn(['secret', ...args], {
    env: { ...live.env, HARK_ALLOW_UNSIGNED: '1' },
  })
  const [, id, print] = await run.stderrMatch(/\((sec_\w+)\); fingerprint ([0-9a-f ]{19})/)
  return { run, id: id as string, print: print as string }
}

/** The person, as the app would: fetch the key, check the fingerprint, send only ciphertext. */
async function fulfil(id: string, print: string, secret: string): Promise<void> {
  const { secret_request } = await live.server.person.secret(id)
  expect(await fingerprint(secret_request.public_key)).toBe(print)
  await live.server.person.fulfilSecret(
    id,
    await encryptSecret(secret_request.public_key, id, secret),
  )
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('hark secret', () => {
  test('--env runs the command with the secret and passes its exit code through', async () => {
    const secret = canary()
    const { run, id, print } = await requesting([
      'DEPLOY_TOKEN',
      '--description',
      'to deploy',
      '--env',
      'DEPLOY_TOKEN',
      '--',
      'sh',
      '-c',
      'printf %s "$DEPLOY_TOKEN" | sha256sum | cut -d" " -f1; echo "arg=$1"; exit 3',
      'sh',
      '--help',
    ])
    await fulfil(id, print, secret)
    const done = await run.finished()
    expect(done.code).toBe(3)
    // "--help" after "--" is the command's argument, not a request for hark's help.
    expect(done.stdout).toBe(`${sha256(secret)}\narg=--help\n`)
    expect(done.stderr).toContain(`fingerprint ${print}`)
    expect(done.stdout + done.stderr).not.toContain(secret)
    expect((await live.server.person.secret(id)).secret_request.status).toBe('delivered')
    expectNoPlaintext(live.server.dir, secret, log.text())
  })

  test('--out writes the file with mode 0600, replacing an existing one', async () => {
    const secret = canary()
    const path = join(live.cli.home, 'token.txt')
    writeFileSync(path, 'old', { mode: 0o644 })
    const { run, id, print } = await requesting(['API_KEY', '--out', path, '--json'])
    await fulfil(id, print, secret)
    const done = await run.finished()
    expect(done.code).toBe(0)
    expect(done.json()).toEqual({ id, name: 'API_KEY', path })
    expect(readFileSync(path, 'utf8')).toBe(secret)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(done.stdout + done.stderr).not.toContain(secret)
    expectNoPlaintext(live.server.dir, secret, log.text())
  })

  test('--print is the only way it reaches stdout', async () => {
    const secret = `${canary()} with spaces ✓`
    const { run, id, print } = await requesting(['PASSPHRASE', '--print'])
    await fulfil(id, print, secret)
    const done = await run.finished()
    expect(done.code).toBe(0)
    expect(done.stdout).toBe(`${secret}\n`)
    expectNoPlaintext(live.server.dir, secret, log.text())
  })

  test('--timeout exits 124 and withdraws the request', async () => {
    const started = Date.now()
    const { run, id } = await requesting(['SLOW', '--print', '--timeout', '1'])
    const done = await run.finished()
    expect(done.code).toBe(124)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(done.stdout).toBe('')
    expect((await live.server.person.secret(id)).secret_request.status).toBe('cancelled')
  })

  test('a request cancelled elsewhere exits 1', async () => {
    const { run, id } = await requesting(['GONE', '--print'])
    const agent = createAgentClient({ baseUrl: live.server.url, token: live.server.agentToken })
    await agent.cancelSecret(id)
    const done = await run.finished()
    expect(done.code).toBe(1)
    expect(done.stderr).toContain('cancelled')
  })

  test('usage errors exit 2 before asking anything', async () => {
    const count = () =>
      (
        live.server.ctx.db.query('SELECT count(*) AS n FROM secret_requests').get() as {
          n: number
        }
      ).n
    const before = count()
    const cases = [
      ['secret', 'X'],
      ['secret', '--print'],
      ['secret', 'X', '--print', '--out', 'f'],
      ['secret', 'X', '--env', 'X'],
      ['secret', 'X', '--env', '1BAD', '--', 'true'],
      ['secret', 'X', '--print', 'extra'],
    ]
    for (const args of cases) {
      const done = await live.cli.run(args, { env: live.env })
      expect({ args, code: done.code }).toEqual({ args, code: 2 })
    }
    expect(count()).toBe(before)
    const help = await live.cli.run(['help', 'secret'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--env VAR -- COMMAND')
  })
})
