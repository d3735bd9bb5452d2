import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { SecretRecord } from '../../src/messages/asks/secrets/service.ts'
import type { Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { encryptSecret } from '../../src/shared/secret-crypto.ts'
import { signSecret as signWith } from '../asks/signing.ts'
import { type Cli, makeCli, removeHome, type Spawned } from '../cli/live.ts'
import { startProxy } from '../harnesses/signed.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'

/**
 * A secret request's answer is ciphertext sealed to the agent's public key, which the server
 * holds too: a compromised server can seal a value of its own (an attacker's npm token) and hand
 * it over as the person's. So the person's passkey signs the SHA-256 of the ciphertext in the
 * same tap (src/shared/proof.ts secretDecision), and `hark secret` opens only a ciphertext so
 * signed by a key it pinned (issue 31, item 6). The forgeries go through a proxy between the
 * CLI and the real server.
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string }
let cli: Cli
let env: Record<string, string>

beforeEach(async () => {
  s = await startFreshServer({ listen: true })
  s.clock.now = () => Date.now()
  owner = await s.setUpOwner()
  const made = await addChannel(s.ctx, { email: 'owner@example.com', label: 'CI' })
  cli = makeCli()
  env = { HARK_URL: s.url, HARK_TOKEN: made.token }
  expect((await cli.run(['keys', 'refresh'], { env })).code).toBe(0)
})
afterEach(async () => {
  await s.close()
  removeHome(cli)
})

const signSecret = (record: SecretRecord, ciphertext: string) =>
  signWith(owner.authenticator, record, ciphertext, s.rpId)

/** Starts `hark secret NAME --print ARGS` and returns its request as the app reads it. */
async function asking(
  args: string[] = [],
  url = s.url,
): Promise<{ run: Spawned; record: SecretRecord }> {
  const run = cli.spawn(['secret', 'NPM_TOKEN', '--print', ...args], {
    env: { ...env, HARK_URL: url },
  })
  const [, id] = await run.stderrMatch(/\((sec_\w+)\); fingerprint/)
  const r = await s.request('GET', `/v1/app/secrets/${id}`, { cookie: owner.cookie })
  expect(r.status).toBe(200)
  return { run, record: r.body.secret_request }
}

const fulfil = (record: SecretRecord, body: Record<string, unknown>, auth = owner.cookie) =>
  s.request('POST', `/v1/app/secrets/${record.id}/fulfil`, { cookie: auth, json: body })

const lastTitle = async () => {
  const r = await s.request('GET', '/v1/messages?since=0&peek=1', { token: env.HARK_TOKEN })
  return (r.body.messages as Message[]).at(-1)?.body.title
}

describe('hark secret: the ciphertext is the person’s only with their signature', () => {
  test('a signed secret is opened and printed', async () => {
    const { run, record } = await asking()
    const ciphertext = await encryptSecret(record.public_key, record.id, 'npm_person')
    expect(
      (await fulfil(record, { ciphertext, proof: await signSecret(record, ciphertext) })).status,
    ).toBe(200)
    const done = await run.finished()
    expect([done.code, done.stdout]).toEqual([0, 'npm_person\n'])
  })

  test("a server that seals its own value to the agent's key gets it refused, never used", async () => {
    let forged: string | undefined
    const proxy = startProxy(s.url, (body) => {
      if (typeof body?.ciphertext !== 'string' || !forged) return false
      body.ciphertext = forged // the person's proof is kept: it is all the server has
      return true
    })
    try {
      const { run, record } = await asking([], proxy.url)
      // The server knows the public key and the id: that is all sealing takes.
      forged = await encryptSecret(record.public_key, record.id, 'npm_attacker')
      const ciphertext = await encryptSecret(record.public_key, record.id, 'npm_person')
      const proof = await signSecret(record, ciphertext)
      expect((await fulfil(record, { ciphertext, proof })).status).toBe(200)
      const done = await run.finished()
      expect(proxy.rewrites).toBe(1)
      expect(done.code).toBe(1)
      expect(done.stdout).toBe('')
      expect(done.stderr).toContain('is not trusted (the signature is not over this answer')
      expect(done.stderr).not.toContain('npm_attacker')
      expect(await lastTitle()).toBe('Not acted on: the answer was not signed')
    } finally {
      proxy.stop()
    }
  })

  test('an unsigned secret is refused; --allow-unsigned takes it (weaker, by choice)', async () => {
    const refused = await asking()
    const c1 = await encryptSecret(refused.record.public_key, refused.record.id, 'npm_1')
    expect((await fulfil(refused.record, { ciphertext: c1 })).status).toBe(200)
    const no = await refused.run.finished()
    expect([no.code, no.stdout]).toEqual([1, ''])
    expect(no.stderr).toContain('not trusted (the answer is not signed)')

    const taken = await asking(['--allow-unsigned'])
    const c2 = await encryptSecret(taken.record.public_key, taken.record.id, 'npm_2')
    expect((await fulfil(taken.record, { ciphertext: c2 })).status).toBe(200)
    const yes = await taken.run.finished()
    expect([yes.code, yes.stdout]).toEqual([0, 'npm_2\n'])
  })
})

describe('POST /v1/app/secrets/:id/fulfil with a proof', () => {
  test('a proof over another ciphertext is refused (400) and nothing is stored', async () => {
    const { run, record } = await asking()
    const ciphertext = await encryptSecret(record.public_key, record.id, 'npm_person')
    const other = await encryptSecret(record.public_key, record.id, 'npm_other')
    const r = await fulfil(record, { ciphertext, proof: await signSecret(record, other) })
    expect(r.status).toBe(400)
    expect(JSON.stringify(r.body)).toContain('does not verify for this answer')
    const still = await s.request('GET', `/v1/app/secrets/${record.id}`, { cookie: owner.cookie })
    expect(still.body.secret_request.status).toBe('pending')
    run.proc.kill()
    await run.finished()
  })

  test('a proof sent with a person token is refused (403): signatures come from the app', async () => {
    const { run, record } = await asking()
    const token = (await s.request('POST', '/v1/app/tokens', {
      cookie: owner.cookie,
      json: { label: 'script' },
    })) as { body: { token: string } }
    const ciphertext = await encryptSecret(record.public_key, record.id, 'npm_person')
    const r = await s.request('POST', `/v1/app/secrets/${record.id}/fulfil`, {
      token: token.body.token,
      json: { ciphertext, proof: await signSecret(record, ciphertext) },
    })
    expect(r.status).toBe(403)
    run.proc.kill()
    await run.finished()
  })
})
