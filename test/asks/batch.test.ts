import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { checkAnswerProof, type PinnedApprovers } from '../../src/agent/proof.ts'
import type { Block, Message } from '../../src/messages/schema.ts'
import { addChannel, addPersonToken, addUser } from '../../src/people/service.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'
import { itemHash, signBatch } from './signing.ts'

/**
 * POST /v1/app/answers: several questions answered with one passkey gesture. The assertion is
 * over the list of the items' claim hashes; the server checks it once, settles every item or
 * none, and stores with each answer the proof and the list, which the agent's own check
 * (src/agent/proof.ts) verifies item by item.
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string; user: { id: string } }
let agents: { token: string; id: string }[]

beforeEach(async () => {
  s = await startFreshServer()
  owner = await s.setUpOwner()
  agents = []
  for (const label of ['Laptop', 'CI']) {
    const made = await addChannel(s.ctx, { email: 'owner@example.com', label })
    agents.push({ token: made.token, id: made.channel.id })
  }
})
afterEach(() => s.close())

const approval = (command: string): Block => ({
  type: 'approval',
  id: 'a',
  tool: 'Bash',
  input: { command },
})

async function ask(token: string, blocks: Block[], extra: object = {}): Promise<Message> {
  const r = await s.request('POST', '/v1/messages', { token, json: { body: { blocks }, ...extra } })
  expect(r.status).toBe(200)
  return r.body.message
}

/** Three approvals waiting: two from the first agent, one from the second. */
async function three(): Promise<Message[]> {
  const [a, b] = agents as unknown as [{ token: string }, { token: string }]
  return [
    await ask(a.token, [approval('npm test')]),
    await ask(a.token, [approval('npm run lint')]),
    await ask(b.token, [approval('npm run build')]),
  ]
}

const ALLOW = { decision: 'allow' }

const post = (
  body: unknown,
  auth: { cookie?: string; token?: string } = { cookie: owner.cookie },
) => s.request('POST', '/v1/app/answers', { ...auth, json: body })

async function signedBody(questions: Message[], list?: (h: string[]) => string[]) {
  const items = questions.map((question) => ({ question, answer: ALLOW }))
  const { proof } = await signBatch(owner.authenticator, items, list ? { list } : {})
  return { items: questions.map((q) => ({ id: q.id, answer: ALLOW })), proof }
}

const openIds = async () =>
  ((await s.request('GET', '/v1/app/asks', { cookie: owner.cookie })).body.asks as Message[]).map(
    (m) => m.id,
  )

const auditCount = async () => (await s.ctx.store.audit.page(0, 1000)).length

/** Nothing of the batch was written: every question still open, no decision logged. */
async function expectNothingWritten(questions: Message[], auditBefore: number) {
  expect(await openIds()).toEqual(expect.arrayContaining(questions.map((q) => q.id)))
  expect(await auditCount()).toBe(auditBefore)
}

describe('POST /v1/app/answers', () => {
  test('answers three approvals of two agents with one assertion; each agent verifies its own', async () => {
    const questions = await three()
    const body = await signedBody(questions)
    const r = await post(body)
    expect(r.status).toBe(200)
    expect(r.body.answers.map((a: { answer: unknown }) => a.answer)).toEqual([ALLOW, ALLOW, ALLOW])
    expect(await openIds()).toEqual([])
    const hashes = questions.map((q) => itemHash(q, ALLOW, body.proof.answered_at))
    const tokens = [agents[0], agents[0], agents[1]] as { token: string; id: string }[]
    for (const [i, q] of questions.entries()) {
      const agent = tokens[i] as { token: string; id: string }
      const read = await s.request('GET', `/v1/asks/${q.id}`, { token: agent.token })
      const proof = read.body.message.ask.proof
      expect(proof).toEqual({ ...body.proof, batch: { items: hashes } })
      // The agent's own check, with the keys its channel reports (what `hark keys` pins).
      const pinned = (await s.request('GET', '/v1/channel', { token: agent.token })).body
        .approvers as PinnedApprovers
      const expected = {
        channel_id: agent.id,
        message_id: q.id,
        request_hash: q.ask?.request_hash as string,
        answer: read.body.answer,
        approval: true,
        asked_at: q.created_at,
        now: Date.now(),
      }
      expect(checkAnswerProof(proof, expected, pinned)).toMatchObject({ ok: true })
      // The same proof for a deny, or for a sibling's question, does not verify.
      expect(
        checkAnswerProof(proof, { ...expected, answer: { decision: 'deny' } }, pinned),
      ).toEqual({ ok: false, reason: 'this answer to this question is not in the signed batch' })
    }
    // Agent A's second item carries the counter its first moved the pinned one to: taken only
    // as part of the batch A already took an item of, never for another assertion.
    const a = agents[0] as { token: string; id: string }
    const keys = (await s.request('GET', '/v1/channel', { token: a.token })).body.approvers
    const second = questions[1] as Message
    const proof = (await s.request('GET', `/v1/asks/${second.id}`, { token: a.token })).body.message
      .ask.proof
    const counter = owner.authenticator.counter
    const expected = {
      channel_id: a.id,
      message_id: second.id,
      request_hash: second.ask?.request_hash as string,
      answer: ALLOW,
      approval: true,
      asked_at: second.created_at,
      now: Date.now(),
    }
    const after = (batches: Record<string, number>) => ({
      ...keys,
      counters: { [owner.authenticator.id]: counter },
      batches,
    })
    const first = checkAnswerProof(proof, expected, after({}))
    expect(first).toEqual({ ok: false, reason: expect.stringContaining('counter went back') })
    const took = checkAnswerProof(proof, expected, { ...keys })
    const batch = (took as { batch: string }).batch
    expect(took.ok).toBe(true)
    expect(batch).toMatch(/^[0-9a-f]{64}$/)
    expect(checkAnswerProof(proof, expected, after({ [batch]: Date.now() }))).toMatchObject({
      ok: true,
    })
    // Three decisions in the audit log, each by the passkey, each with the whole list.
    const rows = await s.ctx.store.audit.page(0, 10)
    const entries = rows.map((row) => JSON.parse(row.entry))
    expect(entries.map((e) => [e.message_id, e.by, e.proof.batch.items])).toEqual(
      questions.map((q) => [q.id, 'passkey', hashes]),
    )
  })

  const badBodies: [string, (q: Message[]) => unknown, string][] = [
    ['no items', () => ({ proof: {} }), 'items'],
    [
      'one item (a batch is several)',
      (q) => ({ items: [{ id: q[0]?.id, answer: ALLOW }] }),
      'items',
    ],
    [
      'an item with no id',
      (q) => ({ items: [{ answer: ALLOW }, { id: q[1]?.id, answer: ALLOW }] }),
      'items[0].id',
    ],
    [
      'an unknown key in an item',
      (q) => ({
        items: [
          { id: q[0]?.id, answer: ALLOW, x: 1 },
          { id: q[1]?.id, answer: ALLOW },
        ],
      }),
      'items[0].x',
    ],
  ]
  for (const [what, make, field] of badBodies) {
    test(`bad input (${what}) is 400 naming ${field}, and writes nothing`, async () => {
      const questions = await three()
      const { proof } = await signedBody(questions)
      const before = await auditCount()
      const r = await post({ proof, ...(make(questions) as object) })
      expect(r.status).toBe(400)
      expect(r.body.field).toBe(field)
      await expectNothingWritten(questions, before)
    })
  }

  test('an answer that is not valid for its question is 400 naming the item, nothing written', async () => {
    const questions = await three()
    const body = await signedBody(questions)
    const before = await auditCount()
    const items = body.items.map((item, i) =>
      i === 1 ? { ...item, answer: { decision: 'maybe' } } : item,
    )
    const r = await post({ ...body, items })
    expect([r.status, r.body.field]).toEqual([400, 'items[1].answer.decision'])
    await expectNothingWritten(questions, before)
  })

  test('the same question twice is 400 naming the repeat', async () => {
    const questions = await three()
    const body = await signedBody(questions)
    const r = await post({ ...body, items: [...body.items, body.items[0]] })
    expect([r.status, r.body.field]).toEqual([400, 'items[3].id'])
    await expectNothingWritten(questions, 0)
  })

  test("another person's question, or an unknown id, is 404 naming the item, nothing written", async () => {
    await addUser(s.ctx, { email: 'other@example.com' })
    const theirs = await addChannel(s.ctx, { email: 'other@example.com', label: 'Theirs' })
    const questions = await three()
    const foreign = await ask(theirs.token, [approval('rm -rf /')])
    for (const id of [foreign.id, 'msg_unknown']) {
      const body = await signedBody(questions)
      const items = [...body.items, { id, answer: ALLOW }]
      const r = await post({ ...body, items })
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ error: 'items[3].id: question not found', field: 'items[3].id' })
      await expectNothingWritten(questions, 0)
    }
  })

  test('an item already answered is 409 naming it; the others stay open', async () => {
    const questions = await three()
    const first = questions[1] as Message
    const done = await s.request('POST', `/v1/app/messages/${first.id}/answer`, {
      cookie: owner.cookie,
      json: { answer: { decision: 'deny' } },
    })
    expect(done.status).toBe(200)
    const before = await auditCount()
    const r = await post(await signedBody(questions))
    expect([r.status, r.body.field]).toEqual([409, 'items[1].id'])
    expect(r.body.error).toBe('items[1].id: the question is already answered')
    await expectNothingWritten([questions[0], questions[2]] as Message[], before)
  })

  test('an item answered elsewhere while the batch is checked: 409 naming it, none settled', async () => {
    const questions = await three()
    const body = await signedBody(questions)
    const late = questions[2] as Message
    // The race made exact: the third is denied from another device just as the server starts
    // checking the batch's signature (after every item was found open).
    const passkeys = s.ctx.store.passkeys
    const byId = passkeys.byId.bind(passkeys)
    let raced = false
    passkeys.byId = async (id: string) => {
      if (!raced) {
        raced = true
        const r = await s.request('POST', `/v1/app/messages/${late.id}/answer`, {
          cookie: owner.cookie,
          json: { answer: { decision: 'deny' } },
        })
        expect(r.status).toBe(200)
      }
      return await byId(id)
    }
    const before = await auditCount()
    const r = await post(body)
    expect(raced).toBe(true)
    expect([r.status, r.body.field]).toEqual([409, 'items[2].id'])
    // The first two, settled in the same unit before the third failed, were rolled back.
    expect(await openIds()).toEqual(questions.slice(0, 2).map((q) => q.id))
    expect(await auditCount()).toBe(before + 1) // the deny from the other device only
  })

  test('a question that takes no signed answer is 400 naming it', async () => {
    const [a] = agents as unknown as [{ token: string }]
    const questions = await three()
    const plain = await ask(a.token, [{ type: 'text_input', id: 't', label: 'Why?' }])
    const body = await signedBody(questions)
    const r = await post({ ...body, items: [{ id: plain.id, answer: 'because' }, ...body.items] })
    expect([r.status, r.body.field]).toEqual([400, 'items[0].id'])
    await expectNothingWritten(questions, 0)
  })

  const forgedLists: [string, (h: string[]) => string[]][] = [
    ['an item left out of the signed list', (h) => h.slice(0, 2)],
    ['the items signed in another order', (h) => [h[1], h[0], h[2]] as string[]],
    [
      'an item of the list swapped for another claim',
      (h) => [h[0], h[1], 'f'.repeat(64)] as string[],
    ],
  ]
  for (const [what, list] of forgedLists) {
    test(`a signature over another list (${what}) is 400 naming proof, nothing written`, async () => {
      const questions = await three()
      const r = await post(await signedBody(questions, list))
      expect(r.status).toBe(400)
      expect(r.body.field).toBe('proof')
      expect(r.body.error).toContain('does not verify')
      await expectNothingWritten(questions, 0)
    })
  }

  test('a person token is 403: only the app signs', async () => {
    const questions = await three()
    const { token } = await addPersonToken(s.ctx, { email: 'owner@example.com' })
    const r = await post(await signedBody(questions), { token })
    expect(r.status).toBe(403)
    await expectNothingWritten(questions, 0)
  })
})
