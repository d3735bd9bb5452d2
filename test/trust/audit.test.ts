import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { chainHash } from '../../src/messages/asks/audit/service.ts'
import { GENESIS_HASH } from '../../src/messages/asks/audit/store.ts'
import type { Block, Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { canonicalJson } from '../../src/shared/canonical.ts'
import { signAnswer, signBatch } from '../asks/signing.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'

/** `hark admin audit verify` / `export` on a real data directory, before and after tampering. */
const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string }
let agentToken: string

beforeEach(async () => {
  s = await startFreshServer()
  owner = await s.setUpOwner()
  agentToken = (await addChannel(s.ctx, { email: 'owner@example.com', label: 'CI' })).token
})
afterEach(() => s.close())

const block = (command: string): Block => ({
  type: 'approval',
  id: 'a',
  tool: 'Bash',
  input: { command },
})

async function decide(command: string, answer: unknown, signed: boolean): Promise<Message> {
  const r = await s.request('POST', '/v1/messages', {
    token: agentToken,
    json: { body: { blocks: [block(command)] } },
  })
  const q = r.body.message as Message
  const proof = signed ? await signAnswer(owner.authenticator, q, answer) : undefined
  const a = await s.request('POST', `/v1/app/messages/${q.id}/answer`, {
    cookie: owner.cookie,
    json: { answer, ...(proof ? { proof } : {}) },
  })
  expect(a.status).toBe(200)
  return q
}

async function admin(...args: string[]) {
  const proc = Bun.spawn([process.execPath, MAIN, 'admin', ...args, '--data', s.dir], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, HARK_CONFIG: '/dev/null' },
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { stdout, stderr, code }
}

/** Rewrites one row's entry, as someone with the database file would. */
function tamper(seq: number, change: (entry: Record<string, unknown>) => void, rechain: boolean) {
  const rows = s.ctx.db
    .query<{ seq: number; entry: string }, []>('SELECT seq, entry FROM audit_log ORDER BY seq')
    .all()
  let prev = GENESIS_HASH
  for (const row of rows) {
    let text = row.entry
    if (row.seq === seq) {
      const entry = JSON.parse(text)
      change(entry)
      text = canonicalJson(entry)
      s.ctx.db.run('UPDATE audit_log SET entry = ?1 WHERE seq = ?2', [text, row.seq])
    }
    if (rechain) {
      const hash = chainHash(prev, text)
      s.ctx.db.run('UPDATE audit_log SET prev_hash = ?1, hash = ?2 WHERE seq = ?3', [
        prev,
        hash,
        row.seq,
      ])
      prev = hash
    }
  }
}

describe('hark admin audit', () => {
  test('verify: a whole chain with good signatures is OK; export gives one JSON line per decision', async () => {
    await decide('make deploy', { decision: 'allow' }, true)
    await decide('rm -rf /', { decision: 'deny', message: 'no' }, false)
    await decide('make test', { decision: 'allow', scope: 'once' }, true)
    const ok = await admin('audit', 'verify')
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('3 decisions, 2 signed by a passkey')
    expect(ok.stdout).toContain('OK: the chain is whole and every signature checks')

    const exported = await admin('audit', 'export')
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => [l.seq, l.entry.by, l.entry.answer.decision])).toEqual([
      [1, 'passkey', 'allow'],
      [2, 'session', 'deny'],
      [3, 'passkey', 'allow'],
    ])
    expect(lines[1].prev_hash).toBe(lines[0].hash)
  })

  test('verify: decisions signed together (one assertion over the list) check row by row', async () => {
    const asked: Message[] = []
    for (const command of ['make a', 'make b']) {
      const r = await s.request('POST', '/v1/messages', {
        token: agentToken,
        json: { body: { blocks: [block(command)] } },
      })
      asked.push(r.body.message)
    }
    const deny = { decision: 'deny' }
    const { proof } = await signBatch(
      owner.authenticator,
      asked.map((question) => ({ question, answer: deny })),
    )
    const r = await s.request('POST', '/v1/app/answers', {
      cookie: owner.cookie,
      json: { items: asked.map((q) => ({ id: q.id, answer: deny })), proof },
    })
    expect(r.status).toBe(200)
    const ok = await admin('audit', 'verify')
    expect(ok.stdout).toContain('2 decisions, 2 signed by a passkey')
    expect(ok.stdout).toContain('OK: the chain is whole and every signature checks')
    // The log rewritten (and re-chained) to say the second was allowed: its item is not in
    // the signed list.
    tamper(
      2,
      (e) => {
        e.answer = { decision: 'allow' }
      },
      true,
    )
    const bad = await admin('audit', 'verify')
    expect(bad.code).toBe(1)
    expect(bad.stdout).toContain(
      'row 2: signature: this answer to this question is not in the signed batch',
    )
    expect(bad.stdout).not.toContain('row 1')
  })

  test('a row changed in the database breaks the chain there', async () => {
    await decide('make deploy', { decision: 'allow' }, true)
    await decide('rm -rf /', { decision: 'deny' }, false)
    tamper(
      2,
      (e) => {
        e.answer = { decision: 'allow' }
      },
      false,
    )
    const r = await admin('audit', 'verify')
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('row 2: the chain breaks here')
  })

  test('a rewritten, re-chained log still fails: the signature is over the real decision', async () => {
    await decide('terraform destroy', { decision: 'deny' }, true)
    tamper(
      1,
      (e) => {
        e.answer = { decision: 'allow' }
      },
      true,
    )
    const r = await admin('audit', 'verify')
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('row 1: signature: the signature is not over this answer')
    expect(r.stdout).not.toContain('chain breaks')
  })
})
