import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '../../src/messages/schema.ts'
import { until } from '../harness.ts'
import { type DroppingProxy, startDroppingProxy } from './dropping-proxy.ts'
import { liveCli } from './live.ts'

/**
 * Issue 16, "Safe retries": the connection drops after the server committed a write and before
 * the CLI read the answer. The CLI retries with the same idempotency key, the server answers the
 * first result again, the command succeeds, and the person sees the write once.
 */
const live = liveCli()
let proxy: DroppingProxy
beforeAll(async () => {
  proxy = await startDroppingProxy(live.server.url)
})
afterAll(() => proxy.close())

/** The CLI's environment, pointed at the proxy instead of the server. */
const viaProxy = () => ({ ...live.env, HARK_URL: proxy.url })

const count = (sql: string, ...args: string[]) =>
  (live.server.ctx.db.query(sql).get(...args) as { n: number }).n
const messagesWith = (text: string) =>
  count("SELECT count(*) AS n FROM messages WHERE json_extract(body, '$.text') = ?", text)

/** What the person's app shows of the channel: every message with `text`. */
async function personSees(text: string): Promise<Message[]> {
  const { messages } = await live.server.person.feed(live.server.channelId, { since: 0 })
  return messages.filter((m): m is Message => 'body' in m && m.body.text === text)
}

describe('a dropped connection after the server committed', () => {
  test('hark send succeeds, and the message is there once', async () => {
    const text = 'sent exactly once'
    const before = proxy.dropped
    proxy.drop('POST /v1/messages ', () => messagesWith(text) === 1)
    const out = await live.cli.run(['send', text, '--json'], { env: viaProxy() })
    expect(proxy.dropped).toBe(before + 1)
    expect(out.code).toBe(0)
    expect(out.stderr).toContain('retrying in')
    const { message } = out.json<{ message: Message }>()
    expect(message.body.text).toBe(text)
    expect(messagesWith(text)).toBe(1)
    const seen = await personSees(text)
    expect(seen.map((m) => m.id)).toEqual([message.id])
  })

  test('hark ask asks once, and the answer still reaches it', async () => {
    const text = 'Deploy now (asked once)?'
    const before = proxy.dropped
    proxy.drop('POST /v1/messages ', () => messagesWith(text) === 1)
    const asking = live.cli.spawn(
      ['ask', text, '--confirm', 'Deploy', '--json', '--timeout', '30'],
      {
        env: viaProxy(),
      },
    )
    await until(() => proxy.dropped === before + 1, 15_000)
    // The question is asked; the CLI's retry finds it and waits on it.
    await asking.stderrMatch(/retrying in/, 15_000)
    const [question] = await personSees(text)
    if (!question) throw new Error('the question was not asked')
    await until(() => live.server.ctx.waiters.size > 0, 15_000)
    await live.server.person.answer(question.id, true)
    const done = await asking.finished()
    expect(done.code).toBe(0)
    expect(done.json()).toEqual({ id: question.id, status: 'answered', answer: true })
    expect(messagesWith(text)).toBe(1)
    expect(await personSees(text)).toHaveLength(1)
  })

  test('an upload and the message that carries it: one file, one message', async () => {
    const text = 'with a report'
    const path = join(live.cli.home, 'report.txt')
    writeFileSync(path, 'all green\n')
    const files = () => count("SELECT count(*) AS n FROM files WHERE name = 'report.txt'")
    const before = proxy.dropped
    proxy.drop('POST /v1/files?', () => files() === 1)
    const out = await live.cli.run(['send', text, '--file', path, '--json'], { env: viaProxy() })
    expect(proxy.dropped).toBe(before + 1)
    expect(out.code).toBe(0)
    expect(files()).toBe(1)
    expect(messagesWith(text)).toBe(1)
    const { message } = out.json<{ message: Message }>()
    expect(message.body.blocks?.[0]).toMatchObject({ type: 'file', name: 'report.txt' })
  })
})
