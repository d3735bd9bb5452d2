import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, statSync } from 'node:fs'
import { admin } from '../../src/cli/admin/index.ts'
import { vapidFile } from '../../src/push/vapid.ts'
import { failsWith } from '../harness.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

let f: PushFixture
afterEach(() => f?.close())

const post = (fx: PushFixture, json: unknown) =>
  fx.app.call<{ subscription: { id: string } }>('POST', '/v1/app/push/subscriptions', { json })

describe('subscriptions', () => {
  test('list shows name, browser from the user agent, created and last success; delete removes one', async () => {
    f = await startPushServer()
    const sub = f.receiver.subscription('a')
    const res = await f.app.raw('POST', '/v1/app/push/subscriptions', {
      json: { endpoint: sub.endpoint, keys: sub.keys, name: 'Pixel', expirationTime: null },
      headers: {
        'user-agent':
          'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36',
      },
    })
    expect(res.status).toBe(200)
    const { subscription } = (await res.json()) as { subscription: { id: string } }
    const { subscriptions } = await f.app.call<{ subscriptions: unknown[] }>(
      'GET',
      '/v1/app/push/subscriptions',
    )
    expect(subscriptions).toEqual([
      {
        id: subscription.id,
        name: 'Pixel',
        browser: 'Chrome on Android',
        created_at: expect.any(Number),
        last_success_at: null,
      },
    ])
    await f.app.call('DELETE', `/v1/app/push/subscriptions/${subscription.id}`)
    expect(
      (await f.app.call<{ subscriptions: unknown[] }>('GET', '/v1/app/push/subscriptions'))
        .subscriptions,
    ).toEqual([])
    await failsWith(f.app.call('DELETE', `/v1/app/push/subscriptions/${subscription.id}`), 404)
  })

  test('the same endpoint again is the same device, with fresh keys', async () => {
    f = await startPushServer()
    const first = await f.subscribe('a')
    const again = await f.subscribe('a')
    expect(again.device.id).toBe(first.device.id)
    expect((await f.s.agent.channel()).channel.push_devices).toBe(1)
  })

  test("another person cannot take over a registered endpoint (409); the owner's device keeps working", async () => {
    f = await startPushServer()
    const { device, sub } = await f.subscribe('victim', 'Phone')
    await f.s.addPerson('thief@example.com')
    const thief = await f.s.sessionClient('thief@example.com')
    // The thief learned the endpoint URL and registers it with keys of their own.
    const theirs = f.receiver.subscription('thief-keys')
    const res = await thief.raw('POST', '/v1/app/push/subscriptions', {
      json: { endpoint: sub.endpoint, keys: theirs.keys, name: 'Mine now' },
    })
    expect(res.status).toBe(409)
    expect(((await res.json()) as { field?: string }).field).toBe('endpoint')
    expect(
      (await thief.call<{ subscriptions: unknown[] }>('GET', '/v1/app/push/subscriptions'))
        .subscriptions,
    ).toEqual([])
    // The row is untouched: same owner, same name, the victim's keys.
    const row = await f.s.ctx.store.push.byId(device.id)
    expect(row?.user_id).toBe((await f.s.ctx.store.users.byEmail(f.s.ownerEmail))?.id as string)
    expect(row?.name).toBe('Phone')
    expect(row?.p256dh).toBe(sub.keys.p256dh)
    expect(row?.auth).toBe(sub.keys.auth)
    // Pushes still reach (and decrypt at) the victim's device.
    await f.s.agent.send({ body: { text: 'still mine' } })
    const [got] = await f.receiver.waitFor(1)
    expect(got?.subscription).toBe('victim')
    expect(got?.payload.text).toBe('still mine')
    // The owner re-registering the same endpoint still updates it.
    const again = await f.subscribe('victim')
    expect(again.device.id).toBe(device.id)
  })

  test('test sends a test notification to that device only', async () => {
    f = await startPushServer()
    const { device } = await f.subscribe('a')
    await f.subscribe('b')
    await f.app.call('POST', `/v1/app/push/subscriptions/${device.id}/test`)
    const [got] = await f.receiver.waitFor(1)
    expect(got?.subscription).toBe('a')
    expect(got?.payload.kind).toBe('test')
    await failsWith(f.app.call('POST', '/v1/app/push/subscriptions/push_nope/test'), 404)
  })

  test("another person's device is 404 for delete and test", async () => {
    f = await startPushServer()
    const { device } = await f.subscribe('a')
    await f.s.addPerson('stranger@example.com')
    const stranger = await f.s.sessionClient('stranger@example.com')
    await failsWith(stranger.call('DELETE', `/v1/app/push/subscriptions/${device.id}`), 404)
    await failsWith(stranger.call('POST', `/v1/app/push/subscriptions/${device.id}/test`), 404)
    expect(
      (await stranger.call<{ subscriptions: unknown[] }>('GET', '/v1/app/push/subscriptions'))
        .subscriptions,
    ).toEqual([])
  })

  test('bad keys and bodies are 400 naming the field', async () => {
    f = await startPushServer()
    const sub = f.receiver.subscription('a')
    const cases: [unknown, string][] = [
      [{ endpoint: sub.endpoint, keys: { p256dh: 'short', auth: sub.keys.auth } }, 'keys.p256dh'],
      [{ endpoint: sub.endpoint, keys: { p256dh: sub.keys.p256dh, auth: 'a!b' } }, 'keys.auth'],
      [{ endpoint: sub.endpoint }, 'keys'],
      [{ keys: sub.keys }, 'endpoint'],
      [{ endpoint: 'not a url', keys: sub.keys }, 'endpoint'],
    ]
    for (const [json, field] of cases) {
      const e = await failsWith(post(f, json), 400)
      expect(e.field).toBe(field)
    }
    expect((await f.s.agent.channel()).channel.push_devices).toBe(0)
  })
})

describe('endpoint hosts', () => {
  const keysOf = (fx: PushFixture) => fx.receiver.subscription('k').keys

  test('loopback, private, link-local, IP literals, local names and plain http are refused', async () => {
    f = await startPushServer({ pushAllowHosts: [] })
    f.s.ctx.push.resolve = async () => ['93.184.216.34']
    const refused = [
      'http://fcm.googleapis.com/fcm/send/x',
      'https://127.0.0.1/push',
      'https://10.1.2.3/push',
      'https://192.168.1.1/push',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/push',
      'https://[fe80::1]/push',
      'https://8.8.8.8/push',
      'https://localhost/push',
      'https://push.localhost/push',
      'https://router.local/push',
      'https://intranet/push',
      'https://user:pw@fcm.googleapis.com/x',
      'ftp://fcm.googleapis.com/x',
    ]
    for (const endpoint of refused) {
      const e = await failsWith(post(f, { endpoint, keys: keysOf(f) }), 400)
      expect(e.field).toBe('endpoint')
    }
    // The receiver itself, not allowed here.
    const sub = f.receiver.subscription('a')
    await failsWith(post(f, { endpoint: sub.endpoint, keys: sub.keys }), 400)
    expect((await f.s.agent.channel()).channel.push_devices).toBe(0)
  })

  test('a public name is refused when it resolves to a private address, accepted otherwise', async () => {
    f = await startPushServer({ pushAllowHosts: [] })
    f.s.ctx.push.resolve = async () => ['10.0.0.5']
    const endpoint = 'https://push.example.com/send/abc'
    const e = await failsWith(post(f, { endpoint, keys: keysOf(f) }), 400)
    expect(e.error).toContain('private')
    f.s.ctx.push.resolve = async () => ['::ffff:127.0.0.1']
    await failsWith(post(f, { endpoint, keys: keysOf(f) }), 400)
    f.s.ctx.push.resolve = async () => {
      throw new Error('ENOTFOUND')
    }
    await failsWith(post(f, { endpoint, keys: keysOf(f) }), 400)
    f.s.ctx.push.resolve = async () => ['142.250.180.10']
    await post(f, { endpoint, keys: keysOf(f) })
    expect((await f.s.agent.channel()).channel.push_devices).toBe(1)
  })

  test('--push-allow-hosts lets a named host (or host:port) in, over http too', async () => {
    f = await startPushServer({ pushAllowHosts: [] })
    const sub = f.receiver.subscription('a')
    const port = new URL(f.receiver.url).port
    f.s.ctx.config.pushAllowHosts = [`127.0.0.1:${Number(port) + 1}`]
    await failsWith(post(f, { endpoint: sub.endpoint, keys: sub.keys }), 400)
    f.s.ctx.config.pushAllowHosts = [`127.0.0.1:${port}`]
    await post(f, { endpoint: sub.endpoint, keys: sub.keys })
    await f.s.agent.send({ body: { text: 'allowed' } })
    expect((await f.receiver.waitFor(1))[0]?.payload.text).toBe('allowed')
  })

  test('redirects from a push service are not followed', async () => {
    f = await startPushServer()
    await f.subscribe('a')
    f.receiver.answer('a', 307)
    await f.s.agent.send({ body: { text: 'x' } })
    await Bun.sleep(30)
    await f.s.ctx.push.idle()
    expect(f.receiver.attempts).toEqual([['a', 307]])
    expect(f.receiver.received).toHaveLength(0)
  })
})

describe('VAPID keys and GET /v1/info, GET /v1/channel', () => {
  test('made once at first start, 0600, stable across restarts, public key in /v1/info', async () => {
    f = await startPushServer()
    const file = vapidFile(f.s.dir)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const info = await f.s.raw().info()
    expect(info.features.push).toBe(true)
    expect(Buffer.from(info.vapid_public_key, 'base64url')).toHaveLength(65)
    await f.s.restart()
    expect((await f.s.raw().info()).vapid_public_key).toBe(info.vapid_public_key)
  })

  test('push_devices counts the devices a push of this channel reaches', async () => {
    f = await startPushServer()
    expect((await f.s.agent.channel()).channel.push_devices).toBe(0)
    await f.subscribe('a')
    await f.subscribe('b')
    expect((await f.s.agent.channel()).channel.push_devices).toBe(2)
    const other = await f.s.addChannel('Other', 'other@example.com')
    expect((await other.agent.channel()).channel.push_devices).toBe(0)
  })

  test('hark admin vapid rotate warns, makes new keys, drops every subscription', async () => {
    f = await startPushServer()
    await f.subscribe('a')
    const before = (await f.s.raw().info()).vapid_public_key
    const lines: string[] = []
    const code = await admin(['vapid', 'rotate', '--data', f.s.dir], {}, (l) => lines.push(l))
    expect(code).toBe(0)
    expect(lines.join('\n')).toMatch(/drops every push subscription/)
    expect(lines.join('\n')).toMatch(/dropped 1 subscriptions/)
    expect(existsSync(vapidFile(f.s.dir))).toBe(true)
    // The running server sees the new key without a restart.
    const after = (await f.s.raw().info()).vapid_public_key
    expect(after).not.toBe(before)
    expect((await f.s.agent.channel()).channel.push_devices).toBe(0)
  })
})
