import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { Ctx } from '../../src/core/context.ts'
import { sendMessage } from '../../src/messages/service.ts'
import { subscribe } from '../../src/push/service.ts'
import { rotateVapidIn } from '../../src/push/vapid.ts'
import { closeContext } from '../../src/server/context.ts'
import { type Receiver, startReceiver } from '../push/receiver.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'

/**
 * A push refused under a VAPID pair that was rotated in the database and not yet re-read by
 * this instance (`hark admin vapid rotate`, or another instance, within its 15 s): not the
 * device's fault, so it is signed again with the new pair and sent at once, instead of counting
 * towards the device's removal. An instance in process on a throwaway cluster, a local push
 * receiver that decrypts.
 */
const skip = skipWithoutPostgres()

let cluster: PgCluster
let receiver: Receiver
let ctx: Ctx | undefined
let sql: SQL | undefined

describe.skipIf(skip)('a push refused under rotated VAPID keys', () => {
  beforeAll(async () => {
    cluster = await startCluster()
    receiver = startReceiver()
  }, 60_000)
  afterAll(async () => {
    if (ctx) await closeContext(ctx)
    await sql?.close()
    receiver?.close()
    await cluster?.close()
  })

  test('is signed again with the new pair and delivered; the device is not counted against', async () => {
    const url = await cluster.database('resign')
    const made = await provisionOwner(url)
    ctx = await pgInstance(url, { pushAllowHosts: ['127.0.0.1'] })
    const sub = receiver.subscription('phone')
    await subscribe(ctx, made.user.id, { endpoint: sub.endpoint, keys: sub.keys }, null)
    const held = ctx.push.vapid.current().publicKey
    // Rotated elsewhere; this instance has not re-read it yet. The push service now knows the
    // new key only (the device subscribed again under it): the old signature is refused once.
    sql = new SQL(url, { max: 1 })
    const rotated = await rotateVapidIn(sql)
    expect(rotated.publicKey).not.toBe(held)
    receiver.answer('phone', 401)
    await sendMessage(ctx, made.channel, 'agent', { body: { text: 'after the rotation' } })
    const [pushed] = await receiver.waitFor(1, 10_000)
    expect(pushed?.payload.text).toBe('after the rotation')
    expect(receiver.attempts).toEqual([
      ['phone', 401],
      ['phone', 201],
    ])
    // Signed the second time with the new pair (the VAPID header's k=).
    expect(pushed?.headers.get('authorization')).toContain(`k=${rotated.publicKey}`)
    expect(ctx.push.outcomes.get('resign')).toBe(1)
    expect(ctx.push.outcomes.get('refused')).toBeUndefined()
    expect(await ctx.store.push.countByUser(made.user.id)).toBe(1)
  })
})
