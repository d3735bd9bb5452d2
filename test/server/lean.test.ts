import { afterAll, expect, test } from 'bun:test'
import { handlerOf } from '../../src/server/app.ts'
import { leanRoute } from '../../src/server/lean.ts'
import { BASE, startTestServer } from '../harness.ts'

const s = await startTestServer()
afterAll(() => s.close())

/** The lean long-poll path answers exactly as the Elysia routes do (status, headers, body). */
test('the lean long-poll routes answer byte for byte like Elysia', async () => {
  const { agent, token } = await s.addChannel('lean')
  await agent.send({ body: { text: 'hi' } })
  const asked = await agent.send({ body: { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] } })
  const id = asked.message.id
  const auth = (t?: string): Record<string, string> => (t ? { authorization: `Bearer ${t}` } : {})
  const lean = handlerOf(s.ctx, s.app)
  const paths = [
    '/v1/messages?since=0&peek=1',
    '/v1/messages?since=0&limit=1&peek=1',
    '/v1/messages?since=0&sender=agent&peek=1',
    '/v1/messages?since=x',
    '/v1/messages?wait=-1',
    '/v1/messages?sender=bot',
    '/v1/messages?peek=2',
    '/v1/messages?limit=0',
    '/v1/messages?since=0&since=1&peek=1',
    `/v1/asks/${id}`,
    `/v1/asks/${id}?wait=0`,
    '/v1/asks/msg_nothing',
    '/v1/asks/msg_nothing?wait=x',
  ]
  for (const t of [token, undefined, 'hark_agent_wrong']) {
    for (const path of paths) {
      const make = () => new Request(`${BASE}${path}`, { headers: auth(t) })
      expect(leanRoute(s.ctx, make())).toBeDefined()
      const a = await s.app.handle(make())
      const b = await (leanRoute(s.ctx, make()) as Promise<Response>)
      expect([b.status, [...b.headers], await b.text()]).toEqual([
        a.status,
        [...a.headers],
        await a.text(),
      ])
      // The server's handler (either way) says no cache may keep the answer.
      expect((await lean(make())).headers.get('cache-control')).toBe('no-store')
    }
  }
  // Anything unusual is Elysia's.
  for (const path of [
    '/v1/messages?foo=1',
    '/v1/messages?since=%31',
    '/v1/messages/',
    '/v1/asks/a%20b',
  ]) {
    expect(leanRoute(s.ctx, new Request(`${BASE}${path}`))).toBeUndefined()
  }
})
