import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import { probe, queryValue, RUNS, waitValue } from './fuzz.ts'
import { type FuzzServer, fuzzServer } from './setup.ts'

/**
 * Property-based tests of query strings and ids in paths: any `since`, `wait`, `limit`,
 * `sender`, `peek` (and unknown keys, malformed percent-encoding) on the feeds and asks is
 * answered at once (waits are kept short) with 200 or a 4xx JSON error; never 500, never a hang.
 */
let f: FuzzServer
beforeAll(async () => {
  f = await fuzzServer()
  const agent = f.s.agentClient(f.agent)
  for (let i = 0; i < 5; i++) await agent.send({ body: { text: `m${i}` } })
  await f.s.personClient(f.person).send(f.channelId, { text: 'from the person' })
})
afterAll(() => f.s.close())

const KEYS = ['since', 'wait', 'limit', 'sender', 'peek', 'x', 'since[]', '__proto__']
const pair = fc
  .tuple(fc.constantFrom(...KEYS), fc.oneof(queryValue, fc.constant('')))
  .map(([k, v]) => {
    try {
      return `${encodeURIComponent(k)}=${encodeURIComponent(v)}`
    } catch {
      return `${k}=`
    }
  })
const malformed = fc.constantFrom('%', '%zz', 'since=%E0%A4%A', 'wait=%00', '&&&', '=', 'since==1')
const search = fc
  .array(fc.oneof({ weight: 5, arbitrary: pair }, { weight: 1, arbitrary: malformed }), {
    maxLength: 5,
  })
  .map((parts) => parts.join('&'))

/** Any valid `wait` above 0.2 s is lowered so a property run never holds for long. */
const tame = (query: string) =>
  query.replace(/(^|&)wait=([^&]*)/g, (_m, lead: string, v: string) => {
    let decoded = v
    try {
      decoded = decodeURIComponent(v)
    } catch {}
    const n = Number(decoded)
    return `${lead}wait=${Number.isFinite(n) && n > 0.2 ? '0.1' : v}`
  })

test('GET /v1/messages and the person feed: any query string', async () => {
  const statuses = new Set<number>()
  await fc.assert(
    fc.asyncProperty(search, fc.boolean(), async (q, asPerson) => {
      const path = asPerson ? `/v1/app/channels/${f.channelId}/messages` : '/v1/messages'
      const token = asPerson ? f.person : f.agent
      const request = new Request(`http://hark.test${path}?${tame(q)}`, {
        headers: { authorization: `Bearer ${token}` },
      })
      statuses.add(await probe(f.s, request))
    }),
    { numRuns: RUNS * 2 },
  )
  expect(statuses.has(200)).toBe(true)
  expect(statuses.has(400)).toBe(true)
})

test('GET /v1/asks/:id: any id and any wait', async () => {
  const question = await f.s
    .agentClient(f.agent)
    .send({ body: { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] } })
  const id = fc.oneof(
    fc.constant(question.message.id),
    fc.constantFrom('msg_missing', '', '..', '%2e%2e', 'a'.repeat(300)),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
  )
  await fc.assert(
    fc.asyncProperty(id, waitValue, async (i, w) => {
      let wait: string
      try {
        wait = encodeURIComponent(w)
      } catch {
        wait = '1'
      }
      const request = new Request(
        `http://hark.test/v1/asks/${i}?wait=${tame(`wait=${wait}`).slice(5)}`,
        {
          headers: { authorization: `Bearer ${f.agent}` },
        },
      )
      await probe(f.s, request)
    }),
    { numRuns: RUNS },
  )
})

test('GET /v1/app/search: any q, limit and cursor is 200 or a JSON 400, never 500', async () => {
  // Words of FTS5's syntax among the generated text, so the quoting is what keeps them text.
  const syntax = fc.constantFrom('"', '*', '-', ':', '^', '(', ')', 'NEAR', 'AND', 'OR', 'NOT', '+')
  const word = fc.oneof(syntax, queryValue, fc.constantFrom('m1', 'from', 'person'))
  const q = fc
    .tuple(fc.array(word, { maxLength: 8 }), fc.constantFrom(' ', ''))
    .map(([words, between]) => words.join(between))
  const statuses = new Set<number>()
  await fc.assert(
    fc.asyncProperty(q, fc.option(queryValue), fc.option(queryValue), async (words, l, c) => {
      const params = new URLSearchParams({ q: words })
      if (l !== null) params.set('limit', l)
      if (c !== null) params.set('cursor', c)
      const request = new Request(`http://hark.test/v1/app/search?${params}`, {
        headers: { authorization: `Bearer ${f.person}` },
      })
      const status = await probe(f.s, request)
      expect([200, 400]).toContain(status)
      statuses.add(status)
    }),
    { numRuns: RUNS * 2 },
  )
  expect(statuses).toEqual(new Set([200, 400]))
})
