import { afterEach, describe, expect, test } from 'bun:test'
import { MAX_PUSH_DEVICES } from '../../src/push/service.ts'
import { failsWith } from '../harness.ts'
import { type PushFixture, startPushServer } from '../push/fixture.ts'

/**
 * Attack: push fan-out. Each device a person registers gets every agent message POSTed to its
 * endpoint, a URL the person picks; with no cap one account could register any number and turn
 * the server into a request amplifier. And a key nothing can be encrypted to (all zeros) was
 * stored, then failed and was retried at every push. Now: at most MAX_PUSH_DEVICES devices a
 * person (409 beyond, saying so), and keys checked at subscribe (400 naming the field).
 */

let f: PushFixture
afterEach(() => f?.close())

const register = (fx: PushFixture, id: string, person = fx.app) => {
  const sub = fx.receiver.subscription(id)
  return person.call<{ subscription: { id: string } }>('POST', '/v1/app/push/subscriptions', {
    json: { endpoint: sub.endpoint, keys: sub.keys, name: id },
  })
}
const rows = (fx: PushFixture) =>
  (fx.s.ctx.db.query('SELECT count(*) AS n FROM push_subscriptions').get() as { n: number }).n
const queued = (fx: PushFixture) =>
  (fx.s.ctx.db.query('SELECT count(*) AS n FROM push_queue').get() as { n: number }).n

describe('devices per person', () => {
  test(`at most ${MAX_PUSH_DEVICES}: the next is 409 saying the cap, with nothing written`, async () => {
    expect(MAX_PUSH_DEVICES).toBe(20)
    f = await startPushServer()
    const devices: string[] = []
    for (let i = 0; i < MAX_PUSH_DEVICES; i++) {
      devices.push((await register(f, `d${i}`)).subscription.id)
    }
    // The attack went on to 120 and more: every one past the cap is refused.
    for (let i = MAX_PUSH_DEVICES; i < MAX_PUSH_DEVICES + 5; i++) {
      const e = await failsWith(register(f, `d${i}`), 409)
      expect(e.error).toContain(`${MAX_PUSH_DEVICES} devices`)
      expect(e.error).toContain('remove one in Settings')
      expect(e.field).toBeUndefined()
    }
    expect(rows(f)).toBe(MAX_PUSH_DEVICES)
    expect((await f.s.agent.channel()).channel.push_devices).toBe(MAX_PUSH_DEVICES)

    // A device already theirs registers again (the browser refreshing it): same device, not
    // counted twice.
    const again = await register(f, 'd3')
    expect(again.subscription.id).toBe(devices[3] as string)
    expect(rows(f)).toBe(MAX_PUSH_DEVICES)

    // One agent message goes to the registered devices only.
    await f.s.agent.send({ body: { text: 'hello' } })
    await f.receiver.waitFor(MAX_PUSH_DEVICES)
    await Bun.sleep(30)
    await f.s.ctx.push.idle()
    expect(f.receiver.received).toHaveLength(MAX_PUSH_DEVICES)

    // Removing one in settings makes room for another.
    await f.app.call('DELETE', `/v1/app/push/subscriptions/${devices[0]}`)
    await register(f, 'new')
    expect(rows(f)).toBe(MAX_PUSH_DEVICES)
    await failsWith(register(f, 'one-more'), 409)
  })

  test("the cap is per person: another person's devices take none of mine", async () => {
    f = await startPushServer()
    for (let i = 0; i < MAX_PUSH_DEVICES; i++) await register(f, `mine${i}`)
    await f.s.addChannel('Bob agent', 'bob@example.com')
    await f.s.addPerson('bob@example.com')
    await register(f, 'bobs', await f.s.sessionClient('bob@example.com'))
    expect(rows(f)).toBe(MAX_PUSH_DEVICES + 1)
  })
})

describe('keys at subscribe', () => {
  const b64 = (bytes: Uint8Array | number[]) => Buffer.from(bytes).toString('base64url')

  test('p256dh must be an uncompressed P-256 point on the curve; auth 16 bytes: 400 naming the field', async () => {
    f = await startPushServer()
    const sub = f.receiver.subscription('a')
    const point = Buffer.from(sub.keys.p256dh, 'base64url')
    const offCurve = Buffer.from(point)
    offCurve[64] = (offCurve[64] as number) ^ 1
    const compressed = Buffer.concat([
      Buffer.from([2 + ((point[64] as number) & 1)]),
      point.subarray(1, 33),
    ])
    const xIsPrime = Buffer.from(point)
    Buffer.from('ffffffff00000001000000000000000000000000ffffffffffffffffffffffff', 'hex').copy(
      xIsPrime,
      1,
    )
    const badP256dh = {
      'all zero': b64(new Uint8Array(65)),
      '0x04 then zeros': b64([4, ...new Uint8Array(64)]),
      'off the curve': b64(offCurve),
      compressed: b64(compressed),
      'x not below p': b64(xIsPrime),
      'not base64url': `${sub.keys.p256dh.slice(0, -1)}!`,
      '64 bytes': b64(point.subarray(0, 64)),
    }
    for (const [what, p256dh] of Object.entries(badP256dh)) {
      const res = await f.app.raw('POST', '/v1/app/push/subscriptions', {
        json: { endpoint: sub.endpoint, keys: { p256dh, auth: sub.keys.auth } },
      })
      expect(`${what}: ${res.status}`).toBe(`${what}: 400`)
      const e = (await res.json()) as { error: string; field?: string }
      expect(e.field).toBe('keys.p256dh')
      expect(e.error).toContain('P-256')
    }
    for (const auth of [b64(new Uint8Array(15)), b64(new Uint8Array(17)), 'a!b', 'A']) {
      const e = await failsWith(
        f.app.call('POST', '/v1/app/push/subscriptions', {
          json: { endpoint: sub.endpoint, keys: { p256dh: sub.keys.p256dh, auth } },
        }),
        400,
      )
      expect(e.field).toBe('keys.auth')
      expect(e.error).toContain('16 bytes')
    }
    expect(rows(f)).toBe(0)
    await f.s.agent.send({ body: { text: 'to nobody' } })
    expect(queued(f)).toBe(0)
    // The real keys, padded or not, are taken (and stored unpadded).
    await f.app.call('POST', '/v1/app/push/subscriptions', {
      json: {
        endpoint: sub.endpoint,
        keys: { p256dh: `${sub.keys.p256dh}=`, auth: sub.keys.auth },
      },
    })
    expect(
      await f.s.ctx.store.push.byUser(
        (await f.s.ctx.store.users.byEmail(f.s.ownerEmail))?.id as string,
      ),
    ).toMatchObject([{ p256dh: sub.keys.p256dh, auth: sub.keys.auth }])
  })

  test('a device stored with bad keys before this check is removed at its first push, not retried', async () => {
    f = await startPushServer()
    const { device } = await f.subscribe('good')
    const bad = f.receiver.subscription('bad')
    const userId = (await f.s.ctx.store.users.byEmail(f.s.ownerEmail))?.id as string
    await f.s.ctx.store.push.insert({
      id: 'push_badkeys',
      user_id: userId,
      endpoint: bad.endpoint,
      p256dh: Buffer.alloc(65).toString('base64url'),
      auth: bad.keys.auth,
      name: null,
      user_agent: null,
      created_at: f.s.ctx.clock.now(),
    })
    await f.s.agent.send({ body: { text: 'hello' } })
    await f.receiver.waitFor(1)
    for (let i = 0; i < 100 && (await f.s.ctx.store.push.byId('push_badkeys')); i++)
      await Bun.sleep(5)
    await f.s.ctx.push.idle()
    expect(await f.s.ctx.store.push.byId('push_badkeys')).toBeUndefined()
    expect(await f.s.ctx.store.push.byId(device.id)).toBeDefined()
    expect(queued(f)).toBe(0)
    expect(f.receiver.attempts.filter(([id]) => id === 'bad')).toEqual([])
  })
})
