import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { signAnswer } from '../asks/signing.ts'
import { type Cli, makeCli, type Ran, removeHome } from '../cli/live.ts'
import { denyToAllow, replayOf, startProxy } from '../harnesses/signed.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'

/**
 * The agent's side of trusted answers, as real processes: `hark keys` pins the person's
 * passkeys; `hark hook claude` / `hark hook codex` / `hark ask --verify` act on an allow only
 * with the person's signature over it, and refuse what a server can make up on its own.
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string; user: { id: string } }
let cli: Cli
let env: Record<string, string>

beforeEach(async () => {
  s = await startFreshServer({ listen: true })
  owner = await s.setUpOwner()
  const made = await addChannel(s.ctx, { email: 'owner@example.com', label: 'CI' })
  cli = makeCli()
  env = { HARK_URL: s.url, HARK_TOKEN: made.token }
  const pinned = await cli.run(['keys', 'refresh'], { env })
  expect([pinned.code, pinned.stdout]).toEqual([0, expect.stringContaining('pinned on first use')])
})
afterEach(async () => {
  await s.close()
  removeHome(cli)
})

const bash = {
  hook_event_name: 'PermissionRequest',
  session_id: 'trust-1',
  cwd: '/home/me/p',
  tool_name: 'Bash',
  tool_input: { command: 'make deploy', description: 'Deploy' },
}

async function openQuestion(known: Set<string>): Promise<Message> {
  for (let i = 0; i < 1500; i++) {
    const r = await s.request('GET', '/v1/app/asks', { cookie: owner.cookie })
    const found = (r.body.asks as Message[]).find((m) => !known.has(m.id))
    if (found) return found
    await Bun.sleep(10)
  }
  throw new Error('no question appeared')
}

/** Runs `hark ARGS` while the person answers its question as `answerWith` says. */
async function answeredRun(
  args: string[],
  stdin: string | undefined,
  answerWith: (q: Message) => Promise<{ answer: unknown; proof?: unknown }>,
  runEnv: Record<string, string> = env,
): Promise<{ ran: Ran; question: Message }> {
  const known = new Set(
    ((await s.request('GET', '/v1/app/asks', { cookie: owner.cookie })).body.asks as Message[]).map(
      (m) => m.id,
    ),
  )
  const run = cli.run(args, { env: runEnv, stdin, timeoutMs: 20_000 })
  const question = await openQuestion(known)
  const body = await answerWith(question)
  const r = await s.request('POST', `/v1/app/messages/${question.id}/answer`, {
    cookie: owner.cookie,
    json: body,
  })
  expect(r.status).toBe(200)
  return { ran: await run, question }
}

const signed = (answer: unknown) => async (q: Message) => ({
  answer,
  proof: await signAnswer(owner.authenticator, q, answer, { rpId: s.rpId }),
})
const unsigned = (answer: unknown) => async () => ({ answer })

const lastMessage = async (): Promise<Message> => {
  const r = await s.request('GET', '/v1/messages?since=0&peek=1', { token: env.HARK_TOKEN })
  return r.body.messages.at(-1)
}

describe('hark keys', () => {
  test('lists the pinned passkey with its fingerprint', async () => {
    const ran = await cli.run(['keys', '--json'], { env })
    const out = ran.json<{ origin: string; keys: { id: string; fingerprint: string }[] }>()
    expect(out.origin).toBe(s.origin)
    expect(out.keys.map((k) => k.id)).toEqual([owner.authenticator.id])
    expect(out.keys[0]?.fingerprint).toMatch(/^([0-9a-f]{4} ){7}[0-9a-f]{4}$/)
  })

  test('refresh takes a new passkey only with a signature from one already pinned', async () => {
    const phone = s.authenticator()
    expect((await s.addPasskey(owner.cookie, phone, 'phone')).status).toBe(200)
    // Approved with the new, not yet pinned key: refused, nothing changes.
    const refused = await answeredRun(['keys', 'refresh'], undefined, async (q) => ({
      answer: { decision: 'allow' },
      proof: await signAnswer(phone, q, { decision: 'allow' }, { rpId: s.rpId }),
    }))
    expect(refused.ran.code).toBe(1)
    expect(refused.ran.stderr).toContain('has not pinned')
    const before = JSON.parse(readFileSync(cli.configFile, 'utf8')).profiles.default.approvers.keys
    expect(before).toHaveLength(1)
    // Approved with the pinned key: taken.
    const taken = await answeredRun(['keys', 'refresh'], undefined, signed({ decision: 'allow' }))
    expect(taken.ran.code).toBe(0)
    expect(taken.ran.stdout).toContain('took the new keys')
    expect(taken.question.body.blocks?.[0]).toMatchObject({
      type: 'approval',
      tool: 'hark: trust new passkeys',
    })
    const after = JSON.parse(readFileSync(cli.configFile, 'utf8')).profiles.default.approvers.keys
    expect(after.map((k: { id: string }) => k.id)).toEqual([owner.authenticator.id, phone.id])
  })
})

describe('hark hook claude with signatures', () => {
  test('a signed allow is reported', async () => {
    const { ran } = await answeredRun(
      ['hook', 'claude'],
      JSON.stringify(bash),
      signed({ decision: 'allow' }),
    )
    expect([ran.code, ran.stderr]).toEqual([0, ''])
    expect(ran.json()).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    })
  })

  test('an unsigned allow (a script, a database write) decides nothing; the person is told', async () => {
    const { ran } = await answeredRun(
      ['hook', 'claude'],
      JSON.stringify(bash),
      unsigned({ decision: 'allow' }),
    )
    expect([ran.code, ran.stdout]).toEqual([0, ''])
    expect(ran.stderr).toContain('not trusted (the answer is not signed)')
    expect((await lastMessage()).body.title).toBe('Not acted on: the answer was not signed')
  })

  test('an unsigned deny is still a deny (it lets nothing happen)', async () => {
    const { ran } = await answeredRun(
      ['hook', 'claude'],
      JSON.stringify(bash),
      unsigned({ decision: 'deny' }),
    )
    expect(ran.json()).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'deny' } } })
  })

  test('--allow-unsigned takes an unsigned allow (weaker, by choice)', async () => {
    const { ran } = await answeredRun(
      ['hook', 'claude', '--allow-unsigned'],
      JSON.stringify(bash),
      unsigned({ decision: 'allow' }),
    )
    expect(ran.json()).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'allow' } } })
  })

  test('codex: an unsigned allow is a deny that says why', async () => {
    const { ran } = await answeredRun(
      ['hook', 'codex'],
      JSON.stringify(bash),
      unsigned({ decision: 'allow' }),
    )
    const decision = ran.json<{
      hookSpecificOutput: { decision: { behavior: string; message: string } }
    }>().hookSpecificOutput.decision
    expect(decision.behavior).toBe('deny')
    expect(decision.message).toContain('not signed by the person')
  })
})

describe('hark ask --verify', () => {
  test('a signed answer is printed; an unsigned one is refused (exit 1) and never printed', async () => {
    const good = await answeredRun(
      ['ask', 'Ship it?', '--choice', 'yes,no', '--verify'],
      undefined,
      signed('yes'),
    )
    expect([good.ran.code, good.ran.stdout.trim()]).toEqual([0, 'yes'])
    expect(good.question.ask?.request_hash).toMatch(/^[0-9a-f]{64}$/)
    const bad = await answeredRun(
      ['ask', 'Ship it?', '--choice', 'yes,no', '--verify'],
      undefined,
      unsigned('yes'),
    )
    expect(bad.ran.code).toBe(1)
    expect(bad.ran.stdout).toBe('')
    expect(bad.ran.stderr).toContain('the answer is not trusted')
  })

  /** An approval asked with `hark ask`: its answer is signed as the hooks' are (issue 28, 10). */
  const approvalAsk = [
    'ask',
    'Deploy?',
    '--block',
    JSON.stringify({
      type: 'approval',
      id: 'approval',
      tool: 'Bash',
      input: { command: 'make deploy' },
      summary: 'Deploy',
    }),
    '--verify',
    '--json',
  ]

  test('an approval block: a passkey-signed allow is accepted, as the hooks accept it', async () => {
    const allow = { decision: 'allow' }
    const good = await answeredRun(approvalAsk, undefined, signed(allow))
    expect(good.ran.stderr).not.toContain('not trusted')
    expect(good.ran.code).toBe(0)
    expect(good.ran.json()).toMatchObject({ status: 'answered', answer: allow })
    expect(good.question.ask?.request_hash).toMatch(/^[0-9a-f]{64}$/)
  })

  test("an approval block: a deny turned into an allow, or another question's allow replayed, is refused", async () => {
    // The person signs a deny; a lying server (a proxy here) hands the agent an allow.
    const lying = startProxy(s.url, denyToAllow)
    try {
      const forged = await answeredRun(approvalAsk, undefined, signed({ decision: 'deny' }), {
        ...env,
        HARK_URL: lying.url,
      })
      expect(lying.rewrites).toBeGreaterThan(0)
      expect(forged.ran.code).toBe(1)
      expect(forged.ran.stdout).not.toContain('"allow"')
      expect(forged.ran.stderr).toContain(
        'the answer is not trusted: the signature is not over this answer to this question',
      )
    } finally {
      lying.stop()
    }
    // An allow the person signed for an earlier approval, handed back as this one's answer.
    const first = await answeredRun(approvalAsk, undefined, signed({ decision: 'allow' }))
    expect(first.ran.code).toBe(0)
    const record = await s.request('GET', `/v1/asks/${first.question.id}`, {
      token: env.HARK_TOKEN,
    })
    const replaying = startProxy(s.url, replayOf(record.body))
    try {
      const replayed = await answeredRun(approvalAsk, undefined, signed({ decision: 'deny' }), {
        ...env,
        HARK_URL: replaying.url,
      })
      expect(replaying.rewrites).toBeGreaterThan(0)
      expect(replayed.ran.code).toBe(1)
      expect(replayed.ran.stderr).toContain('the answer is not trusted')
    } finally {
      replaying.stop()
    }
    const unsignedAllow = await answeredRun(approvalAsk, undefined, unsigned({ decision: 'allow' }))
    expect(unsignedAllow.ran.code).toBe(1)
    expect(unsignedAllow.ran.stderr).toContain(
      'the answer is not trusted: the answer is not signed',
    )
  })
})
