import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { checkAnswerProof, type Expected, type PinnedApprovers } from '../../src/agent/proof.ts'
import { requestHash } from '../../src/agent/trust.ts'
import type { Block, Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { canonicalJson } from '../../src/shared/canonical.ts'
import type { AnswerProof } from '../../src/shared/proof.ts'
import { signAnswer } from '../asks/signing.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'

/**
 * The agent's check of a signed answer (src/agent/proof.ts), against real assertions of a
 * software passkey: every forgery a compromised server could try is refused, and only the
 * person's signature over exactly this answer to exactly this question passes.
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string }
let agentToken: string
let pinned: PinnedApprovers & { channel_id: string }

const input = { command: 'terraform apply', description: 'Apply the plan' }
const block: Block = { type: 'approval', id: 'a', tool: 'Bash', input, scopes: ['once', 'session'] }

beforeEach(async () => {
  s = await startFreshServer()
  owner = await s.setUpOwner()
  agentToken = (await addChannel(s.ctx, { email: 'owner@example.com', label: 'CI' })).token
  const r = await s.request('GET', '/v1/channel', { token: agentToken })
  pinned = { ...r.body.approvers, channel_id: r.body.channel.id }
})
afterEach(() => s.close())

async function ask(): Promise<{ q: Message; askedAt: number }> {
  const askedAt = Date.now()
  const r = await s.request('POST', '/v1/messages', {
    token: agentToken,
    json: { body: { blocks: [block] } },
  })
  return { q: r.body.message, askedAt }
}

function expected(q: Message, answer: unknown, askedAt: number): Expected {
  return {
    channel_id: pinned.channel_id,
    message_id: q.id,
    request_hash: requestHash('Bash', input),
    answer,
    approval: true,
    asked_at: askedAt,
    now: Date.now(),
  }
}

const allow = { decision: 'allow' }

describe('checkAnswerProof', () => {
  test("the person's signature over this answer passes; its counter is reported", async () => {
    const { q, askedAt } = await ask()
    const proof = await signAnswer(owner.authenticator, q, allow)
    const check = checkAnswerProof(proof, expected(q, allow, askedAt), pinned)
    expect(check).toEqual({
      ok: true,
      credential_id: owner.authenticator.id,
      counter: owner.authenticator.counter,
    })
  })

  const cases: [
    string,
    (
      q: Message,
      other: Message,
    ) => Promise<[AnswerProof | unknown, Partial<Expected>?, Partial<PinnedApprovers>?]>,
    RegExp,
  ][] = [
    [
      'no proof at all (an answer written into the database)',
      async () => [undefined],
      /not signed/,
    ],
    [
      'a signature over deny, the answer turned into allow',
      async (q) => [await signAnswer(owner.authenticator, q, { decision: 'deny' })],
      /not over this answer/,
    ],
    [
      'a signature replayed onto another question',
      async (_q, other) => [await signAnswer(owner.authenticator, other, allow)],
      /not over this answer/,
    ],
    [
      'a signature made in another channel',
      async (q) => [await signAnswer(owner.authenticator, q, allow), { channel_id: 'ch_other' }],
      /not over this answer/,
    ],
    [
      'the action changed on the server (another request hash)',
      async (q) => [
        await signAnswer(owner.authenticator, q, allow),
        { request_hash: requestHash('Bash', { command: 'rm -rf /' }) },
      ],
      /not over this answer/,
    ],
    [
      'allow for the session signed as allow once',
      async (q) => [
        await signAnswer(owner.authenticator, q, allow),
        { answer: { decision: 'allow', scope: 'session' } },
      ],
      /not over this answer/,
    ],
    [
      'a passkey the agent never pinned',
      async (q) => [await signAnswer(owner.authenticator, q, allow), {}, { keys: [] }],
      /no passkey is pinned/,
    ],
    [
      'no user verification',
      async (q) => [await signAnswer(owner.authenticator, q, allow, { tamper: { uv: false } })],
      /not verified/,
    ],
    [
      'another origin',
      async (q) => [
        await signAnswer(owner.authenticator, q, allow, {
          tamper: { origin: 'https://evil.example' },
        }),
      ],
      /signed for https:\/\/evil/,
    ],
    [
      'another relying party',
      async (q) => [
        await signAnswer(owner.authenticator, q, allow, { tamper: { rpId: 'evil.example' } }),
      ],
      /another site/,
    ],
    [
      'a counter that went back',
      async (q) => [
        await signAnswer(owner.authenticator, q, allow),
        {},
        { counters: { [owner.authenticator.id]: 1000 } },
      ],
      /counter went back/,
    ],
    [
      'signed before the question was asked',
      async (q) => [
        await signAnswer(owner.authenticator, q, allow, { answeredAt: Date.now() - 3600_000 }),
      ],
      /before the question/,
    ],
    [
      'a bit flipped in the signature',
      async (q) => {
        const p = await signAnswer(owner.authenticator, q, allow)
        const sig = Buffer.from(p.signature, 'base64url')
        sig[sig.length - 3] = (sig[sig.length - 3] as number) ^ 1
        return [{ ...p, signature: sig.toString('base64url') }]
      },
      /does not verify/,
    ],
    ['a malformed proof', async () => [{ credential_id: 'x' }], /malformed|not pinned/],
  ]
  for (const [name, build, reason] of cases) {
    test(`refused: ${name}`, async () => {
      const { q, askedAt } = await ask()
      const { q: other } = await ask()
      const [proof, exp = {}, pin = {}] = await build(q, other)
      const check = checkAnswerProof(
        proof,
        { ...expected(q, allow, askedAt), ...exp },
        { ...pinned, ...pin },
      )
      expect(check.ok).toBe(false)
      if (!check.ok) expect(check.reason).toMatch(reason)
    })
  }

  test('a key pinned for the person, but the proof names an unknown credential', async () => {
    const { q, askedAt } = await ask()
    const proof = await signAnswer(owner.authenticator, q, allow)
    const check = checkAnswerProof(
      { ...proof, credential_id: 'AAAA' },
      expected(q, allow, askedAt),
      pinned,
    )
    expect(check).toEqual({ ok: false, reason: 'signed by a passkey this agent has not pinned' })
  })
})

describe('canonical JSON (the bytes both sides hash)', () => {
  test('key order never matters; any change of a value does', () => {
    const shuffle = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(shuffle)
      if (v && typeof v === 'object') {
        return Object.fromEntries(
          Object.entries(v)
            .reverse()
            .map(([k, x]) => [k, shuffle(x)]),
        )
      }
      return v
    }
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value)
        expect(canonicalJson(shuffle(value))).toBe(text)
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(text).not.toMatch(/[\n]/)
      }),
      { seed: 42, numRuns: 300 },
    )
  })

  test('distinct objects give distinct texts', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.dictionary(fc.string(), fc.jsonValue()),
        (a, b) => {
          const same =
            JSON.stringify(JSON.parse(canonicalJson(a))) ===
            JSON.stringify(JSON.parse(canonicalJson(b)))
          expect(canonicalJson(a) === canonicalJson(b)).toBe(same)
        },
      ),
      { seed: 42, numRuns: 300 },
    )
  })
})
