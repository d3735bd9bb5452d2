import { afterEach, describe, expect, test } from 'bun:test'
import { failsWith } from '../harness.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

/**
 * POST /v1/app/push/test, the "Send a test notification" of Settings and the setup wizard
 * (issue 27): a push to every device of the person, received and decrypted by the local push
 * receiver as a browser would, that opens the page it was sent from when tapped.
 */
let f: PushFixture
afterEach(() => f?.close())

const sendTest = (fx: PushFixture, json: unknown = {}) =>
  fx.s.person.call<{ sent: number }>('POST', '/v1/app/push/test', { json })

describe('POST /v1/app/push/test', () => {
  test('reaches every device of the person, decrypted; tapped, it opens Settings', async () => {
    f = await startPushServer()
    await f.subscribe('phone', 'Phone')
    await f.subscribe('laptop', 'Laptop')
    expect(await sendTest(f)).toEqual({ sent: 2 })
    const got = await f.receiver.waitFor(2)
    expect(got.map((r) => r.subscription).sort()).toEqual(['laptop', 'phone'])
    for (const r of got) {
      expect(r.payload).toMatchObject({
        kind: 'test',
        title: 'Test notification',
        url: '/settings?notification=test#notifications',
      })
    }
  })

  test('sent from the setup wizard, the tap opens the wizard again', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    expect(await sendTest(f, { opens: 'setup' })).toEqual({ sent: 1 })
    const [got] = await f.receiver.waitFor(1)
    expect(got?.payload.url).toBe('/setup?notification=test')
  })

  test("a person with no device gets 409 saying what to do; nobody else's device is sent to", async () => {
    f = await startPushServer()
    await f.subscribe('owner-phone')
    const other = await f.s.addPerson('other@example.com')
    const e = await failsWith(other.call('POST', '/v1/app/push/test', { json: {} }), 409)
    expect(e.error).toMatch(/no device of yours gets notifications yet: turn them on/)
    // Nothing was queued (so nothing can arrive later), and nothing arrived.
    expect(await f.s.ctx.store.push.queued()).toBe(0)
    expect(f.receiver.received).toEqual([])
  })

  test('a bad opens is refused naming the field, and nothing is sent', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const e = await failsWith(sendTest(f, { opens: 'https://evil.example' }), 400)
    expect(e.field).toBe('opens')
    // Nothing was queued (so nothing can arrive later), and nothing arrived.
    expect(await f.s.ctx.store.push.queued()).toBe(0)
    expect(f.receiver.received).toEqual([])
  })

  test('limited to 5 a minute per person: the sixth is 429 with Retry-After', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    for (let i = 0; i < 5; i++) expect(await sendTest(f)).toEqual({ sent: 1 })
    const e = await failsWith(sendTest(f), 429)
    expect(e.error).toMatch(/too many test notifications/)
    expect(Number(e.headers.get('retry-after'))).toBeGreaterThan(0)
    await f.receiver.waitFor(5)
  })
})
