import { describe, expect, test } from 'bun:test'
import { createAgentClient } from '../../src/agent/client.ts'
import { addPersonToken } from '../../src/people/service.ts'
import { startTestServer, TestClock } from '../harness.ts'
import { connectedEnv, liveCli } from './live.ts'

const live = liveCli()

const hark = (args: string[], extra: Record<string, string> = {}) =>
  live.cli.run(args, { env: { ...live.env, ...extra } })

const question = async () =>
  (await hark(['send', '--block', '{"type":"confirm","id":"c","label":"OK"}'])).stdout.trim()

describe('authentication failures exit 4', () => {
  test('an unknown token, a person token, no token', async () => {
    const wrong = await hark(['send', 'x', '--json'], { HARK_TOKEN: 'hark_agent_wrong' })
    expect(wrong.code).toBe(4)
    expect(wrong.json()).toEqual({
      error: expect.stringContaining('invalid or revoked token'),
      exit_code: 4,
    })
    expect(wrong.stderr).toContain('invalid or revoked token')
    const person = (await addPersonToken(live.server.ctx, { email: 'owner@example.com' })).token
    const refused = await hark(['inbox'], { HARK_TOKEN: person })
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain('agent token')
    const none = await live.cli.run(['pins'], { env: { HARK_URL: live.server.url } })
    expect(none.code).toBe(4)
    expect(none.stderr).toContain('not connected')
  })
})

describe('outages', () => {
  test('a wait outlives a server restart and still gets the answer', async () => {
    const id = await question()
    const waiting = live.cli.spawn(['wait', id, '--timeout', '60', '--json'], { env: live.env })
    await Bun.sleep(500)
    await live.server.stop()
    await waiting.stderrMatch(/cannot reach the server|lost the server/)
    await Bun.sleep(300)
    await live.server.start()
    await live.server.person.answer(id, true)
    const done = await waiting.finished()
    expect(done.code).toBe(0)
    expect(done.json()).toEqual({ id, status: 'answered', answer: true })
  })

  test('a wait whose server stays down ends at its timeout with 124', async () => {
    const id = await question()
    const started = Date.now()
    const waiting = live.cli.spawn(['wait', id, '--timeout', '3', '--json'], { env: live.env })
    await Bun.sleep(300)
    await live.server.stop()
    const done = await waiting.finished()
    await live.server.start()
    expect(done.code).toBe(124)
    expect(done.json()).toEqual({ id, status: 'timeout' })
    // The retries inside do not carry it far past its deadline.
    expect(Date.now() - started).toBeLessThan(6000)
  })

  test('a plain command retries a bounded number of times, then exits 1', async () => {
    const started = Date.now()
    const out = await live.cli.run(['send', 'x'], {
      env: { HARK_URL: 'http://127.0.0.1:1', HARK_TOKEN: live.server.agentToken },
    })
    expect(out.code).toBe(1)
    expect(out.stderr).toContain('retrying in')
    expect(out.stderr).toContain(
      'cannot reach the server at http://127.0.0.1:1/v1/messages (ECONNREFUSED)',
    )
    expect(Date.now() - started).toBeLessThan(15_000)
  })
})

describe('rate limits', () => {
  test('a 429 is retried after its Retry-After', async () => {
    // The server's clock stands still until the command has met the limit: the bucket refills a
    // token a second, and a command slow to start on a loaded machine used to find one there.
    const clock = new TestClock()
    const limited = await startTestServer({ listen: true, writeLimit: 60, clock })
    try {
      const agent = createAgentClient({ baseUrl: limited.url, token: limited.agentToken })
      // The bucket holds a minute's worth: empty it.
      let status = 200
      while (status !== 429) {
        status = (await agent.raw('POST', '/v1/messages', { json: { body: { text: 'x' } } })).status
      }
      const run = live.cli.spawn(['send', 'after the limit', '--json'], {
        env: connectedEnv(limited),
      })
      await run.stderrMatch(/the server answered 429/, 20_000)
      // Its Retry-After passes (the next try finds a token in the bucket).
      clock.advance(60_000)
      const out = await run.finished()
      expect(out.code).toBe(0)
      expect(out.stderr).toContain('the server answered 429')
      expect(out.json()).toMatchObject({ message: { body: { text: 'after the limit' } } })
    } finally {
      await limited.close()
    }
  })
})
