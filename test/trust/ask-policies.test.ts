import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { type PolicyClaim, policyText } from '../../src/shared/policy.ts'
import type { AnswerProof } from '../../src/shared/proof.ts'
import { type Cli, makeCli, removeHome } from '../cli/live.ts'
import {
  answer,
  channel,
  nextQuestion,
  openAskIds,
  type Relay,
  type SignedHark,
  startProxy,
  startSignedHark,
} from '../harnesses/signed.ts'
import { ORIGIN } from '../passkeys/fixture.ts'
import {
  addPolicy,
  allowPrefix,
  forgedPolicies,
  revocation,
  signPolicy,
} from '../policies/fixture.ts'

/**
 * `hark ask --verify` with one approval block and approval policies: the person's signed rule
 * answers a matching approval at once, with no question (one quiet line in the thread, "allowed
 * by rule …" on stderr); a deny rule denies with its message; a rule served through a proxy
 * that plays a malicious server (forged, widened, expired, for another channel, signed by an
 * unpinned key, unsigned, a signed answer's proof replayed as a rule's, a revoked rule served
 * again without its revocation) changes nothing: the person is asked.
 */
let h: SignedHark
let cli: Cli
let channelId: string
let proxy: Relay
let forge: (body: Record<string, unknown>) => boolean

beforeEach(async () => {
  h = await startSignedHark()
  channelId = (await h.s.request('GET', '/v1/channel', { token: h.env.HARK_TOKEN })).body.channel
    .id as string
  cli = makeCli()
  expect((await cli.run(['keys', 'refresh'], { env: h.env })).code).toBe(0)
  forge = () => false
  proxy = startProxy(h.env.HARK_URL, (body) => forge(body))
})
afterEach(async () => {
  proxy.stop()
  await h.close()
  removeHome(cli)
})

const addRule = (rule: PolicyClaim['rule']) => addPolicy(h, rule)

const approvalArgs = (command: string, json = false) => [
  'ask',
  'Run it?',
  '--verify',
  '--block',
  JSON.stringify({ type: 'approval', id: 'approval', tool: 'Bash', input: { command } }),
  ...(json ? ['--json'] : []),
]

const env = () => ({ ...h.env, HARK_URL: proxy.url })
const quietLines = async () =>
  (await channel(h)).filter((m) => /^(Allowed|Denied) by rule/.test(m.body.text ?? ''))

/** Runs `hark ask --verify` on `command` and expects it asked: the person denies (signed). */
async function asked(command: string) {
  const before = await openAskIds(h)
  const run = cli.spawn(approvalArgs(command), { env: env() })
  const question: Message = await nextQuestion(h, before, run.finished())
  await answer(h, question, { decision: 'deny', message: 'asked, denied' }, 'signed')
  const ran = await run.finished()
  expect([ran.code, JSON.parse(ran.stdout)]).toEqual([
    0,
    { decision: 'deny', message: 'asked, denied' },
  ])
  return ran
}

describe('hark ask --verify with approval policies', () => {
  test('a signed allow rule: answered allow with no question, one quiet line, a note on stderr', async () => {
    await addRule(allowPrefix(channelId, 'npm test'))
    const before = await openAskIds(h)
    const ran = await cli.run(approvalArgs('npm test -- --watch', true), { env: env() })
    expect(ran.code).toBe(0)
    expect(ran.json()).toMatchObject({
      id: null,
      status: 'answered',
      answer: { decision: 'allow' },
      policy: expect.stringMatching(/^pol_/),
    })
    expect(ran.stderr).toContain(
      'allowed by rule “Allow Bash commands starting `npm test` for this agent”',
    )
    expect(await openAskIds(h)).toEqual(before)
    const lines = await quietLines()
    expect(lines.map((m) => [m.silent, m.body.text])).toEqual([
      [
        true,
        'Allowed by rule “Allow Bash commands starting `npm test` for this agent”: npm test -- --watch',
      ],
    ])
  })

  test("a deny rule: denied at once with the person's message", async () => {
    await addRule({ ...allowPrefix(channelId, 'git push'), effect: 'deny', message: 'Open a PR' })
    const ran = await cli.run(approvalArgs('git push origin main'), { env: env() })
    expect([ran.code, JSON.parse(ran.stdout)]).toEqual([
      0,
      { decision: 'deny', message: 'Open a PR' },
    ])
    expect(ran.stderr).toContain('denied by rule')
  })

  test('a destructive command is asked, whatever allow rule covers its prefix', async () => {
    await addRule(allowPrefix(channelId, 'rm'))
    await asked('rm -rf build')
    expect(await quietLines()).toEqual([])
  })

  test('without --verify no rule is read: the person is asked', async () => {
    await addRule(allowPrefix(channelId, 'npm test'))
    const before = await openAskIds(h)
    const args = approvalArgs('npm test').filter((a) => a !== '--verify')
    const run = cli.spawn(args, { env: env() })
    const question = await nextQuestion(h, before, run.finished())
    await answer(h, question, { decision: 'deny' }, 'unsigned')
    expect((await run.finished()).code).toBe(0)
  })

  test('forged, widened, expired, other channel, unpinned key, unsigned, a replayed proof: ignored with a warning, the person asked', async () => {
    const narrow = await addRule(allowPrefix(channelId, 'npm test never-this'))
    const other = (await addChannel(h.s.ctx, { email: 'owner@example.com', label: 'B' })).channel.id
    const moved = await addRule(allowPrefix(other, 'npm test'))
    // A real signed allow of an earlier card, its proof replayed as a rule's.
    const first = await asked('npm test --first')
    expect(first.code).toBe(0)
    const card = (await channel(h)).find((m) => m.ask?.proof !== undefined)
    const { served: forged, reasons } = await forgedPolicies({
      authenticator: h.owner.authenticator,
      rpId: h.s.rpId,
      origin: ORIGIN,
      channelId,
      command: 'npm test',
      narrow,
      moved,
      answerProof: card?.ask?.proof as AnswerProof,
    })
    forge = (body) => {
      if (!Array.isArray(body.policies)) return false
      body.policies = forged
      return true
    }
    const ran = await asked('npm test')
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(await quietLines()).toEqual([])
    for (const [p, why] of reasons) {
      expect(ran.stderr).toContain(`policy ${p} ignored: ${why}`)
    }
  })

  test('a revoked rule served again without its revocation: the agent remembers, the person is asked', async () => {
    const { claim, proof } = await addRule(allowPrefix(channelId, 'npm test'))
    const ok = await cli.run(approvalArgs('npm test'), { env: env() })
    expect(JSON.parse(ok.stdout)).toEqual({ decision: 'allow' })
    const rev = revocation(claim.id)
    const r = await h.s.request('POST', `/v1/app/policies/${claim.id}/revoke`, {
      cookie: h.owner.cookie,
      json: { claim: rev, proof: await signPolicy(h.owner.authenticator, rev, { rpId: h.s.rpId }) },
    })
    expect(r.status).toBe(200)
    // Seen revoked once (straight from the server)...
    await asked('npm test')
    // ...then the server hands the rule back without the revocation: still asked.
    forge = (body) => {
      if (!Array.isArray(body.policies)) return false
      body.policies = [{ id: claim.id, claim: policyText(claim), proof }]
      return true
    }
    await asked('npm test')
    expect(proxy.rewrites).toBeGreaterThan(0)
  })
})
