// test-needs: agent-clis
// (Kept in the agent-CLI part that typescript.test.ts ran in before it was split in three (its Deno
// test uses the Deno of .cache/agent-clis); this file itself needs only dist/hark. See scripts/test-parts.ts.)
import { beforeAll, describe, expect, test } from 'bun:test'
import { blocks, Hark, HarkError, type Message } from '../../sdk/typescript/src/index.ts'
import { type SdkServer, useSdkServer } from './server.ts'

/**
 * The TypeScript SDK (sdk/typescript) against a real `dist/hark serve`: every call it makes,
 * the person's side played with a person token. Its retries, idempotency keys and bounds are in
 * typescript-transport.test.ts, its types and other runtimes in typescript-runtimes.test.ts.
 */
const sdk = useSdkServer()
let server: SdkServer
let hark: Hark
let channelId: string

beforeAll(async () => {
  server = sdk.server
  hark = new Hark({ url: server.url, token: server.token })
  channelId = (await hark.channel()).channel.id
}, 60_000)

const answer = (id: string, value: unknown) =>
  server.person('POST', `/v1/app/messages/${id}/answer`, { answer: value })

describe('TypeScript SDK against dist/hark', () => {
  test('send, edit, replace, delete; the channel and a rename', async () => {
    const sent = await hark.send({
      title: 'Build',
      text: 'green',
      blocks: [
        { type: 'progress', id: 'bar', value: 3, max: 10 },
        { type: 'table', columns: ['a', 'b'], rows: [[1, 'x']] },
        { type: 'future_block', anything: 1 },
      ],
    })
    expect(sent.sender).toBe('agent')
    expect(sent.body.title).toBe('Build')
    const plain = await hark.send('just text', { silent: true })
    expect(plain.body).toEqual({ text: 'just text' })
    expect(plain.silent).toBe(true)

    const edited = await hark.edit(sent.id, { block_patches: [{ id: 'bar', value: 7 }] })
    expect(edited.body.blocks?.[0]).toMatchObject({ id: 'bar', value: 7 })
    const replaced = await hark.replace(sent.id, 'replaced')
    expect(replaced.body).toEqual({ text: 'replaced' })
    await hark.delete(sent.id)
    const page = await hark.feed({ since: 0, peek: true })
    expect(page.messages.find((m) => m.id === sent.id)).toEqual({ id: sent.id, deleted: true })

    const renamed = await hark.rename('SDK agent')
    expect(renamed.agent.label).toBe('SDK agent')
    expect((await hark.channel()).channel.label).toBe('SDK agent')
    expect(await hark.health()).toEqual({ ok: true })
  })

  test('ask, the person answers, waitForAnswer returns it (typed)', async () => {
    const q = await hark.ask({ title: 'Deploy?', blocks: [blocks.confirm('go', 'Deploy')] })
    expect(q.ask?.status).toBe('open')
    expect((await hark.asks()).map((m) => m.id)).toContain(q.id)
    const waiting = hark.waitForAnswer<true>(q.id, { timeoutMs: 20_000 })
    await Bun.sleep(300)
    await answer(q.id, true)
    const result = await waiting
    expect(result.status).toBe('answered')
    expect(result.answer).toBe(true)
    expect(result.message.ask?.status).toBe('answered')

    // Several inputs: the answer is an object keyed by block id, typed from the blocks.
    const form = hark.askAndWait(
      {
        title: 'Release',
        blocks: [
          blocks.choice('env', ['staging', 'prod'], { multi: true }),
          blocks.numberInput('n', 'How many'),
          blocks.textInput('notes'),
        ],
      },
      { timeoutMs: 20_000 },
    )
    let asked: Message | undefined
    for (let i = 0; i < 100 && !asked; i++) {
      asked = (await hark.asks()).find((m) => m.body.title === 'Release')
      if (!asked) await Bun.sleep(50)
    }
    await answer(asked!.id, { env: ['prod'], n: 3, notes: 'ok' })
    const got = await form
    expect(got.status).toBe('answered')
    const typed: { env: string[]; n: number; notes: string } | null = got.answer
    expect(typed).toEqual({ env: ['prod'], n: 3, notes: 'ok' })
  })

  test('an approval: the answer is { decision }', async () => {
    const q = await hark.ask({
      blocks: [blocks.approval('ok', 'Bash', { command: 'ls' }, { summary: 'list files' })],
    })
    expect(q.ask?.request_hash).toMatch(/^[0-9a-f]{64}$/)
    await answer(q.id, { decision: 'deny', message: 'not now' })
    const r = await hark.waitForAnswer(q.id, { timeoutMs: 10_000 })
    expect(r.answer).toEqual({ decision: 'deny', message: 'not now' })
  })

  test('waitForAnswer: a timeout is a status, an abort rejects, a cancel ends it', async () => {
    const q = await hark.ask({ blocks: [blocks.toggle('t', 'On?')] })
    const t0 = Date.now()
    const timedOut = await hark.waitForAnswer(q.id, { timeoutMs: 1200 })
    expect(timedOut.status).toBe('timeout')
    expect(timedOut.answer).toBeNull()
    expect(Date.now() - t0).toBeLessThan(8000)

    const controller = new AbortController()
    setTimeout(() => controller.abort(), 200)
    const aborted = hark.waitForAnswer(q.id, { signal: controller.signal })
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' })

    const waiting = hark.waitForAnswer(q.id, { timeoutMs: 20_000 })
    await Bun.sleep(200)
    const cancelled = await hark.cancel(q.id, 'no longer needed')
    expect(cancelled.ask?.status).toBe('cancelled')
    expect((await waiting).status).toBe('cancelled')
    // A cancel of a settled question is 409.
    const again = await hark.cancel(q.id).catch((e) => e)
    expect(again).toBeInstanceOf(HarkError)
    expect(again.status).toBe(409)
  })

  test('feed (long-poll woken by a send) and inbox (the person’s messages, once)', async () => {
    const start = await hark.feed({ since: 0, peek: true })
    const held = hark.feed({ since: start.cursor, wait: 20 })
    await Bun.sleep(200)
    const sent = await hark.send('wake up')
    const page = await held
    expect(page.messages.map((m) => m.id)).toContain(sent.id)
    expect(page.cursor).toBeGreaterThan(start.cursor)

    const inbox = new Hark({ url: server.url, token: server.token })
    expect(await inbox.inbox()).toEqual([])
    const waiting = inbox.inbox({ wait: 20 })
    await Bun.sleep(200)
    await server.person('POST', `/v1/app/channels/${channelId}/messages`, {
      body: { text: 'please also run the linter' },
    })
    const got = await waiting
    expect(got.map((m) => m.body.text)).toEqual(['please also run the linter'])
    const done = await inbox.ack(got[0]!.id, 'done')
    expect(done.state).toBe('done')
    expect(await inbox.inbox()).toEqual([])
  })

  test('messages(): an async iterator of the person’s messages, ended by abort', async () => {
    const controller = new AbortController()
    const reader = new Hark({ url: server.url, token: server.token })
    await reader.inbox() // start after what is there
    const seen: string[] = []
    const loop = (async () => {
      for await (const m of reader.messages({ signal: controller.signal })) {
        seen.push(m.body.text ?? '')
        controller.abort()
      }
    })()
    await Bun.sleep(200)
    await server.person('POST', `/v1/app/channels/${channelId}/messages`, { body: { text: 'hi' } })
    await loop
    expect(seen).toEqual(['hi'])
  })

  test('pins: pin, pins, editPin, unpin', async () => {
    const pin = await hark.pin('build', { blocks: [blocks.progress(1, 4, 'tests', 'bar')] })
    expect(pin.key).toBe('build')
    const edited = await hark.editPin('build', { block_patches: { bar: { value: 4 } } })
    expect(edited.message.body.blocks?.[0]).toMatchObject({ value: 4 })
    expect((await hark.pins()).map((p) => p.key)).toContain('build')
    await hark.unpin('build')
    expect((await hark.pins()).map((p) => p.key)).not.toContain('build')
    const missing = await hark.unpin('build').catch((e) => e)
    expect(missing.status).toBe(404)
  })

  test('upload and download, and an image block naming the file', async () => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7) % 256)
    const info = await hark.upload(bytes, { name: 'data.bin' })
    expect(info).toMatchObject({ name: 'data.bin', size: bytes.length })
    expect(await hark.downloadBytes(info.file_id)).toEqual(bytes)
    const text = await hark.upload(new Blob(['hello'], { type: 'text/plain' }), { name: 'a.txt' })
    expect(text.mime).toStartWith('text/plain')
    expect(await (await hark.download(text.file_id)).text()).toBe('hello')
    const m = await hark.send({ blocks: [{ type: 'image', file_id: info.file_id, alt: 'x' }] })
    expect(m.body.blocks?.[0]).toMatchObject({ file_id: info.file_id })
  })

  test('errors: HarkError with status and field', async () => {
    const bad = await hark
      .send({ blocks: [{ type: 'choice', id: 'c', options: [] }] })
      .catch((e) => e)
    expect(bad).toBeInstanceOf(HarkError)
    expect(bad.status).toBe(400)
    expect(bad.field).toStartWith('body.blocks[0]')
    const noInputId = await hark
      .send({ blocks: [{ type: 'confirm', label: 'x' } as never] })
      .catch((e) => e)
    expect(noInputId.field).toBe('body.blocks[0].id')
    expect((await hark.edit('msg_nope', { text: 'x' }).catch((e) => e)).status).toBe(404)
    const wrong = new Hark({ url: server.url, token: 'hark_agent_wrong', retry: { attempts: 1 } })
    const unauthorized = await wrong.send('x').catch((e) => e)
    expect(unauthorized.status).toBe(401)
    const down = new Hark({
      url: 'http://127.0.0.1:9',
      token: 't',
      retry: { attempts: 2, baseDelayMs: 10 },
    })
    const network = await down.send('x').catch((e) => e)
    expect(network).toBeInstanceOf(HarkError)
    expect(network.kind).toBe('network')
    expect(network.status).toBe(0)
  })
})
