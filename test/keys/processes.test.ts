import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { KEY_PURPOSES } from '../../src/access/keys/keyring.ts'
import { requireBinary, run, type Served, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'
import { SoftwareAuthenticator } from '../passkeys/authenticator.ts'

/**
 * Two `dist/hark serve` processes started together on one data directory, as two instances
 * behind one address: they end with one key per purpose between them, and a passkey ceremony
 * begun on one ends on the other (before, each process sealed with a key of its own).
 */
const ORIGIN = 'https://hark.example.com'
const work = tempDir('hark-keys-processes-')
const data = join(work, 'data')
let servers: Served[] = []
let signInCode = ''

beforeAll(async () => {
  requireBinary()
  const added = await run(['admin', 'user', 'add', 'pat@example.com', '--data', data], {
    HARK_BASE_URL: ORIGIN,
  })
  expect(added.code).toBe(0)
  signInCode = new URL(added.stdout.trim().split('\n').at(-1) as string).hash.slice(1)
  // Both at once: each makes this period's keys if it finds none; one insert wins, both read it.
  const env = { HARK_BASE_URL: ORIGIN }
  servers = await Promise.all([
    startServe(['--data', data], env),
    startServe(['--data', data], env),
  ])
})
afterAll(async () => {
  for (const s of servers) s.proc.kill('SIGKILL')
  await Promise.all(servers.map((s) => s.proc.exited))
  rmSync(work, { recursive: true, force: true })
})

/** What these routes answer: a ceremony's start, or the person it signed in. */
interface Answer {
  challenge_id: string
  options: Parameters<SoftwareAuthenticator['register']>[0] &
    Parameters<SoftwareAuthenticator['login']>[0]
  user: { email: string }
}

/** A public POST as the app at ORIGIN sends it, to one instance's own address. */
async function post(server: Served, path: string, json: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: ORIGIN },
    body: JSON.stringify(json),
  })
  return { status: response.status, body: (await response.json()) as Answer }
}

describe('two hark serve processes on one data directory', () => {
  test('started together, they hold one key per purpose', () => {
    const db = new Database(join(data, 'hark.db'), { readonly: true })
    const rows = db.query('SELECT purpose, period FROM server_keys').all() as {
      purpose: string
      period: number
    }[]
    db.close()
    expect(rows.map((r) => r.purpose).sort()).toEqual([...KEY_PURPOSES].sort())
    expect(new Set(rows.map((r) => r.period)).size).toBe(1)
  })

  test('a sign-in link ceremony begun on one ends on the other', async () => {
    const [a, b] = servers as [Served, Served]
    const started = await post(a, '/v1/auth/passkey/link/options', { code: signInCode })
    expect(started.status).toBe(200)
    const authenticator = new SoftwareAuthenticator(ORIGIN)
    const response = await authenticator.register(started.body.options)
    const done = await post(b, '/v1/auth/passkey/link/verify', {
      challenge_id: started.body.challenge_id,
      response,
      name: 'Pat phone',
    })
    expect(done.status).toBe(200)
    expect(done.body.user.email).toBe('pat@example.com')
    // And a login begun on the second ends on the first.
    const login = await post(b, '/v1/auth/passkey/login/options', {})
    const assertion = await authenticator.login(login.body.options)
    const loggedIn = await post(a, '/v1/auth/passkey/login/verify', {
      challenge_id: login.body.challenge_id,
      response: assertion,
    })
    expect(loggedIn.status).toBe(200)
    expect(loggedIn.body.user.email).toBe('pat@example.com')
  })
})
