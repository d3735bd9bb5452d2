import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import { body, editRequest, jsonish, jsonRequest, probe, RUNS, sendRequest } from './fuzz.ts'
import { type FuzzServer, fuzzServer } from './setup.ts'

/**
 * Property-based tests of the message routes with fast-check: whatever the body, blocks or
 * block patches, the answer is 2xx, or a 4xx JSON error that changed nothing; never a 500.
 */
let f: FuzzServer
beforeAll(async () => {
  f = await fuzzServer()
})
afterAll(() => f.s.close())

const seen = new Map<string, Set<number>>()
const note = (name: string, status: number) => {
  const set = seen.get(name) ?? new Set<number>()
  set.add(status)
  seen.set(name, set)
}

test('POST /v1/messages: any request body', async () => {
  await fc.assert(
    fc.asyncProperty(sendRequest, async (req) => {
      note('send', await probe(f.s, jsonRequest(f.agent, 'POST', '/v1/messages', req)))
    }),
    { numRuns: RUNS * 2 },
  )
  // The generators reach both sides: accepted and rejected messages.
  expect(seen.get('send')?.has(200)).toBe(true)
  expect(seen.get('send')?.has(400)).toBe(true)
})

test('POST /v1/messages: bodies that are not JSON, or not JSON objects', async () => {
  const raw = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.constantFrom('{', '{"body":', '[]', 'null', '"x"', '{"body":{"text":"x"}', '\u0000'),
  )
  const contentType = fc.constantFrom(
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    '',
  )
  await fc.assert(
    fc.asyncProperty(raw, contentType, async (text, type) => {
      const headers: Record<string, string> = { authorization: `Bearer ${f.agent}` }
      if (type) headers['content-type'] = type
      const request = new Request('http://hark.test/v1/messages', {
        method: 'POST',
        headers,
        body: text,
      })
      const status = await probe(f.s, request)
      expect(status === 200 || (status >= 400 && status < 500)).toBe(true)
    }),
    { numRuns: RUNS },
  )
})

test('PATCH /v1/messages/:id: any edit, block patches included', async () => {
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('plain', 'question'), editRequest, async (kind, edit) => {
      const blocks =
        kind === 'plain'
          ? [
              { type: 'progress', id: 'b1', value: 1, max: 10 },
              { type: 'markdown', id: 'b2', text: 'hi' },
            ]
          : [
              { type: 'choice', id: 'b1', options: [{ label: 'A' }, { label: 'B' }] },
              { type: 'text_input', id: 'b2' },
            ]
      const sent = await f.s.agentClient(f.agent).send({ body: { title: 't', blocks } })
      const id = sent.message.id
      note('edit', await probe(f.s, jsonRequest(f.agent, 'PATCH', `/v1/messages/${id}`, edit)))
    }),
    { numRuns: RUNS * 2 },
  )
  expect(seen.get('edit')?.has(200)).toBe(true)
  expect(seen.get('edit')?.has(400)).toBe(true)
})

test('PUT /v1/messages/:id and PUT /v1/pins/:key: any body, any key', async () => {
  const key = fc.oneof(
    fc.constantFrom('build', 'status:ci', 'a.b-c_d', ''),
    fc.string({ maxLength: 70 }),
  )
  await fc.assert(
    fc.asyncProperty(key, sendRequest, body, async (k, pinReq, replacement) => {
      const sent = await f.s.agentClient(f.agent).send({ body: { text: 'to be replaced' } })
      await probe(
        f.s,
        jsonRequest(f.agent, 'PUT', `/v1/messages/${sent.message.id}`, { body: replacement }),
      )
      let path: string
      try {
        path = `/v1/pins/${encodeURIComponent(k)}`
      } catch {
        return // a lone surrogate cannot be put in a URL at all
      }
      note('pin', await probe(f.s, jsonRequest(f.agent, 'PUT', path, pinReq)))
    }),
    { numRuns: RUNS },
  )
  expect(seen.get('pin')?.has(400)).toBe(true)
})

test('any JSON to every agent write route', async () => {
  const route = fc.constantFrom(
    ['POST', '/v1/messages/ID/state'],
    ['POST', '/v1/messages/ID/cancel'],
    ['PATCH', '/v1/agent'],
    ['PATCH', '/v1/pins/build'],
    ['DELETE', '/v1/messages/ID'],
    ['POST', '/v1/messages/msg_unknown/state'],
  )
  await fc.assert(
    fc.asyncProperty(route, jsonish, async ([method, path], payload) => {
      const sent = await f.s.agentClient(f.agent).send({
        body: { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] },
      })
      const request = jsonRequest(
        f.agent,
        method as string,
        (path as string).replace('ID', sent.message.id),
        payload,
      )
      await probe(f.s, request)
    }),
    { numRuns: RUNS },
  )
})

test('counterexamples fast-check found stay fixed', async () => {
  // Elysia's validation message did `${value}` on `{ toString: 0 }` and threw: a 500.
  for (const req of [
    { body: { text: { toString: 0 } } },
    { body: { title: { valueOf: 1, toString: 2 } } },
    { body: { blocks: [{ type: 'markdown', text: { toString: 'x' } }] } },
  ]) {
    expect(await probe(f.s, jsonRequest(f.agent, 'POST', '/v1/messages', req))).toBe(400)
  }
})
