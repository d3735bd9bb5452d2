import { afterEach, describe, expect, test } from 'bun:test'
import { generateKeyPair } from '../../src/shared/secret-crypto.ts'
import { sleep, TestClock } from '../harness.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

let f: PushFixture
afterEach(() => f?.close())

const queued = async (fx: PushFixture) => await fx.s.ctx.store.push.queued()

describe('what sends a push', () => {
  test('an agent message reaches every device, encrypted, with label, title, preview and ids', async () => {
    f = await startPushServer()
    await f.subscribe('phone', 'Phone')
    await f.subscribe('laptop')
    const { message } = await f.s.agent.send({
      body: { title: 'Build', text: 'All  green\non main' },
    })
    const got = await f.receiver.waitFor(2)
    expect(got.map((r) => r.subscription).sort()).toEqual(['laptop', 'phone'])
    for (const r of got) {
      expect(r.payload).toEqual({
        kind: 'message',
        channel_id: f.s.channelId,
        channel_label: 'Test agent',
        message_id: message.id,
        title: 'Build',
        text: 'All green on main',
        url: `/c/${f.s.channelId}#${message.id}`,
      })
      expect(r.headers.get('content-encoding')).toBe('aes128gcm')
      expect(r.headers.get('ttl')).toBe('86400')
      expect(r.headers.get('authorization')).toMatch(/^vapid t=.+, k=.+$/)
    }
    await f.s.ctx.push.idle()
    expect(await queued(f)).toBe(0)
    const { subscriptions } = await f.s.person.call<{
      subscriptions: { name: string | null; last_success_at: number | null; browser: string }[]
    }>('GET', '/v1/app/push/subscriptions')
    expect(subscriptions.every((d) => typeof d.last_success_at === 'number')).toBe(true)
  })

  test("silent messages, edits, state changes, answers and the person's messages send nothing", async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const { message } = await f.s.agent.send({ body: { text: 'quiet' }, silent: true })
    await f.s.agent.edit(message.id, { text: 'edited' })
    await f.s.agent.replace(message.id, { text: 'replaced' })
    const { message: mine } = await f.s.person.send(f.s.channelId, { text: 'from me' })
    await f.s.agent.ack(mine.id, 'working')
    await f.s.agent.send({
      body: { text: 'quiet question', blocks: [{ type: 'confirm', id: 'c', label: 'Go' }] },
      silent: true,
    })
    await sleep(50)
    await f.s.ctx.push.idle()
    expect(f.receiver.received).toHaveLength(0)
    expect(f.receiver.attempts).toHaveLength(0)
  })

  test("a secret request notifies the person's devices", async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const { publicKey } = await generateKeyPair()
    const { secret_request } = await f.s.agent.requestSecret({
      name: 'DEPLOY_KEY',
      public_key: publicKey,
    })
    const [got] = await f.receiver.waitFor(1)
    expect(got?.payload).toMatchObject({ kind: 'message', channel_id: f.s.channelId })
    expect(secret_request.name).toBe('DEPLOY_KEY')
  })

  test('a new pin notifies; replacing or editing it does not; a silent pin does not', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    await f.s.agent.pin('build', { body: { title: 'Build', text: 'running' } })
    await f.receiver.waitFor(1)
    await f.s.agent.pin('build', { body: { title: 'Build', text: 'passed' } })
    await f.s.agent.editPin('build', { text: 'passed again' })
    await f.s.agent.pin('progress', { body: { text: '10%' }, silent: true })
    await sleep(50)
    await f.s.ctx.push.idle()
    expect(f.receiver.received).toHaveLength(1)
    expect(f.receiver.received[0]?.payload.text).toBe('running')
  })

  test("another person's devices get nothing from my channels", async () => {
    f = await startPushServer()
    await f.subscribe('mine')
    const other = await f.s.addChannel('Theirs', 'other@example.com')
    await other.agent.send({ body: { text: 'not for the owner' } })
    await f.s.agent.send({ body: { text: 'for the owner' } })
    await f.receiver.waitFor(1)
    await f.s.ctx.push.idle()
    expect(f.receiver.received.map((r) => r.payload.text)).toEqual(['for the owner'])
  })
})

describe('failures', () => {
  test('410 removes the subscription (and its queued pushes)', async () => {
    f = await startPushServer()
    await f.subscribe('gone')
    f.receiver.answer('gone', 410)
    await f.s.agent.send({ body: { text: 'x' } })
    await sleep(20)
    await f.s.ctx.push.idle()
    expect(f.receiver.attempts).toEqual([['gone', 410]])
    expect(
      await f.s.ctx.store.push.byUser(
        (await f.s.ctx.store.users.byEmail(f.s.ownerEmail))?.id ?? '',
      ),
    ).toEqual([])
    expect((await f.s.agent.channel()).channel.push_devices).toBe(0)
  })

  test('404 removes it too', async () => {
    f = await startPushServer()
    await f.subscribe('gone')
    f.receiver.answer('gone', 404)
    await f.s.agent.send({ body: { text: 'x' } })
    await sleep(20)
    await f.s.ctx.push.idle()
    expect((await f.s.agent.channel()).channel.push_devices).toBe(0)
  })

  test('500 and 429 are retried with backoff, then the push arrives once', async () => {
    f = await startPushServer()
    await f.subscribe('flaky')
    f.receiver.answer('flaky', 500, 503, { status: 429, retryAfter: '0' })
    await f.s.agent.send({ body: { text: 'eventually' } })
    const [got] = await f.receiver.waitFor(1)
    expect(got?.payload.text).toBe('eventually')
    expect(f.receiver.attempts).toEqual([
      ['flaky', 500],
      ['flaky', 503],
      ['flaky', 429],
      ['flaky', 201],
    ])
    await f.s.ctx.push.idle()
    expect(await queued(f)).toBe(0)
  })

  test('Retry-After is honoured over a shorter backoff', async () => {
    f = await startPushServer()
    await f.subscribe('busy')
    f.receiver.answer('busy', { status: 429, retryAfter: '1' })
    const started = performance.now()
    await f.s.agent.send({ body: { text: 'later' } })
    await f.receiver.waitFor(1, 5000)
    expect(performance.now() - started).toBeGreaterThanOrEqual(950)
  })

  test('retries are bounded: after maxAttempts the push is dropped', async () => {
    f = await startPushServer()
    f.s.ctx.push.maxAttempts = 3
    await f.subscribe('down')
    f.receiver.answer('down', 500, 500, 500, 500, 500)
    await f.s.agent.send({ body: { text: 'lost' } })
    await sleep(300)
    await f.s.ctx.push.idle()
    expect(f.receiver.attempts).toHaveLength(3)
    expect(await queued(f)).toBe(0)
    expect((await f.s.agent.channel()).channel.push_devices).toBe(1)
  })

  test('401/403 (VAPID refused) drops the push; a success resets the count; 3 in a row remove the device', async () => {
    f = await startPushServer()
    await f.subscribe('strict')
    f.receiver.answer('strict', 403)
    await f.s.agent.send({ body: { text: 'x' } })
    await sleep(20)
    await f.s.ctx.push.idle()
    expect(f.receiver.attempts).toEqual([['strict', 403]])
    expect(await queued(f)).toBe(0)
    expect((await f.s.agent.channel()).channel.push_devices).toBe(1)
    // A refusal, then a success: the count starts again.
    f.receiver.answer('strict', 401)
    await f.s.agent.send({ body: { text: 'y' } })
    await sleep(20)
    await f.s.ctx.push.idle()
    await f.s.agent.send({ body: { text: 'z' } })
    await f.receiver.waitFor(1)
    await f.s.ctx.push.idle()
    expect((await f.s.agent.channel()).channel.push_devices).toBe(1)
    // Three refusals in a row: the device cannot recover (other keys), so it is removed.
    f.receiver.answer('strict', 403, 401, 403)
    for (const text of ['a', 'b', 'c']) {
      await f.s.agent.send({ body: { text } })
      await sleep(20)
      await f.s.ctx.push.idle()
    }
    expect(f.receiver.attempts.slice(-3)).toEqual([
      ['strict', 403],
      ['strict', 401],
      ['strict', 403],
    ])
    expect((await f.s.agent.channel()).channel.push_devices).toBe(0)
    expect(await queued(f)).toBe(0)
    await f.s.agent.send({ body: { text: 'nobody' } })
    await sleep(20)
    await f.s.ctx.push.idle()
    expect(f.receiver.attempts).toHaveLength(6)
  })

  test("a push service that hangs does not slow the agent's send", async () => {
    f = await startPushServer()
    await f.subscribe('slow')
    f.receiver.answer('slow', 500, 500, 500)
    const started = performance.now()
    for (let i = 0; i < 20; i++) await f.s.agent.send({ body: { text: `m${i}` } })
    // 20 sends through app.handle with a push each: waiting for the push service would take
    // 10 s (20 × 500 ms). 0.2–0.3 s here, 1.3 s once on a loaded machine: 5 s leaves room.
    expect(performance.now() - started).toBeLessThan(5000)
  })
})

describe('deleted while waiting for a retry', () => {
  /** A frozen clock: a failed push waits for its retry until the test moves time on. */
  async function failOnce(text: string) {
    const clock = new TestClock()
    f = await startPushServer({ clock })
    await f.subscribe('phone')
    f.receiver.answer('phone', 503)
    const { message } = await f.s.agent.send({ body: { title: 'Secret', text } })
    while (f.receiver.attempts.length < 1) await sleep(2)
    await f.s.ctx.push.idle()
    expect(await queued(f)).toBe(1) // waiting for its retry
    const recover = async () => {
      clock.advance(60 * 60_000)
      f.s.ctx.push.kick()
      await sleep(20)
      await f.s.ctx.push.idle()
    }
    return { message, recover }
  }

  const arrived = (text: string) =>
    f.receiver.received.filter((r) => JSON.stringify(r.payload).includes(text))

  test('a deleted message is not sent when the push service recovers', async () => {
    const { message, recover } = await failOnce('the launch code is 0000')
    await f.s.agent.remove(message.id)
    await recover()
    expect(await queued(f)).toBe(0)
    expect(f.receiver.attempts).toEqual([['phone', 503]])
    expect(arrived('launch code')).toEqual([])
    // The device is fine: the next message arrives.
    await f.s.agent.send({ body: { text: 'next' } })
    expect((await f.receiver.waitFor(1))[0]?.payload.text).toBe('next')
  })

  test("a deleted channel's pushes are not sent", async () => {
    const { recover } = await failOnce('in a doomed channel')
    await f.s.person.call('DELETE', `/v1/app/channels/${f.s.channelId}`)
    await recover()
    expect(await queued(f)).toBe(0)
    expect(f.receiver.attempts).toEqual([['phone', 503]])
    expect(arrived('doomed')).toEqual([])
  })

  test('an edited message is sent as it reads now', async () => {
    const { message, recover } = await failOnce('password hunter2')
    await f.s.agent.edit(message.id, { text: 'redacted' })
    await recover()
    const [got] = await f.receiver.waitFor(1)
    expect(got?.payload).toMatchObject({
      message_id: message.id,
      title: 'Secret',
      text: 'redacted',
    })
    expect(arrived('hunter2')).toEqual([])
  })
})

describe('durability', () => {
  test('pushes queued before a restart are delivered after it', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    f.s.ctx.push.stop() // as if the server died right after the commits
    for (const text of ['one', 'two', 'three']) await f.s.agent.send({ body: { text } })
    expect(await queued(f)).toBe(3)
    const receiver = f.receiver
    await f.s.restart()
    f.s.ctx.push.retryBaseMs = 20
    const got = await receiver.waitFor(3)
    expect(got.map((r) => r.payload.text).sort()).toEqual(['one', 'three', 'two'])
    await f.s.ctx.push.idle()
    expect(await queued(f)).toBe(0)
  })
})
