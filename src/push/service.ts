import type { Ctx, Tx } from '../core/context.ts'
import { fail, HarkError } from '../core/errors.ts'
import { hashToken, randomBase62 } from '../core/ids.ts'
import { type AskResult, answerAsk, expireIfDue } from '../messages/asks/service.ts'
import type { MessageCreated } from '../messages/events.ts'
import type { MessageRow } from '../messages/store.ts'
import { deviceLabel } from '../shared/device.ts'
import { checkEndpoint } from './endpoint.ts'
import { authKey, p256dhKey } from './keys.ts'
import { MAX_PAYLOAD_BYTES, messagePayload, type TEST_OPENS, testPayload } from './payload.ts'
import type { PushDevice, SubscribeRequest } from './schema.ts'
import type { SubscriptionRow } from './store.ts'

/** A capability lives a day at most, and never past its question's own expiry. */
export const CAPABILITY_TTL_MS = 24 * 3600_000
const CAPABILITY_PREFIX = 'hark_cap_'

/** "Chrome on Android", from the User-Agent the subscription was made with. */
export const browserOf = (userAgent: string | null): string => deviceLabel(userAgent) ?? 'Browser'

const deviceView = (s: SubscriptionRow): PushDevice => ({
  id: s.id,
  name: s.name,
  browser: browserOf(s.user_agent),
  created_at: s.created_at,
  last_success_at: s.last_success_at,
})

/**
 * How many devices one person can have notifications on. Every agent message is sent to each
 * of them, to hosts the person picks, so without a cap one account could make the server post
 * each message to any number of URLs. Twenty is far more than anyone's phones, laptops and
 * browser profiles. Re-registering a device already theirs does not count again.
 */
export const MAX_PUSH_DEVICES = 20

/** Registers (or refreshes) this device for the person's notifications. */
export async function subscribe(
  ctx: Ctx,
  userId: string,
  req: SubscribeRequest,
  userAgent: string | null,
): Promise<PushDevice> {
  const { url } = await checkEndpoint(
    req.endpoint,
    ctx.config.pushAllowHosts ?? [],
    ctx.push.resolve,
  )
  const p256dh = await p256dhKey(req.keys.p256dh)
  if (!p256dh) {
    throw fail.invalid(
      'keys.p256dh',
      'must be base64url of an uncompressed P-256 public key: 65 bytes, 0x04 then a point on the curve',
    )
  }
  const auth = authKey(req.keys.auth)
  if (!auth) throw fail.invalid('keys.auth', 'must be base64url of 16 bytes')
  const name = req.name?.trim() || null
  const row = await ctx.writes.run(async (tx) => {
    // In the write transaction: two devices subscribing at once cannot both take the last place.
    const known = await tx.store.push.byEndpoint(url.href)
    if (!known && (await tx.store.push.countByUser(userId)) >= MAX_PUSH_DEVICES) {
      throw fail.conflict(
        `notifications are on for ${MAX_PUSH_DEVICES} devices already, the most there can be; ` +
          'remove one in Settings → Notifications to add this one',
      )
    }
    return await tx.store.push.insert({
      id: `push_${randomBase62(18)}`,
      user_id: userId,
      endpoint: url.href,
      p256dh,
      auth,
      name,
      user_agent: userAgent?.slice(0, 300) ?? null,
      created_at: ctx.clock.now(),
    })
  })
  // Someone else registered this endpoint: taking it over would let whoever learns a device's
  // endpoint URL swap in their own keys and read (or silence) that person's notifications.
  if (!row) throw new HarkError(409, 'is registered to another account', 'endpoint')
  return deviceView(row)
}

export const listDevices = async (ctx: Ctx, userId: string): Promise<PushDevice[]> =>
  (await ctx.store.push.byUser(userId)).map(deviceView)

/** One of the person's devices; anyone else's is 404. */
async function ownDevice(ctx: Ctx, userId: string, id: string): Promise<SubscriptionRow> {
  const row = await ctx.store.push.byId(id)
  if (!row || row.user_id !== userId) throw fail.notFound('subscription')
  return row
}

export async function removeDevice(ctx: Ctx, userId: string, id: string): Promise<void> {
  await ownDevice(ctx, userId, id)
  await ctx.writes.apply(async (tx) => await tx.store.push.remove(id))
}

/** Queues a test notification to one device; the worker sends it at once. */
export async function sendTest(ctx: Ctx, userId: string, id: string): Promise<void> {
  await ownDevice(ctx, userId, id)
  await ctx.writes.apply(async (tx) => {
    await tx.store.push.enqueueOne(id, null, JSON.stringify(testPayload()), ctx.clock.now())
    tx.after(() => ctx.push.kick())
  })
}

/**
 * "Send a test notification" (issue 27): one to every device of the person, to prove the whole
 * round trip; tapped, it opens the page it was sent from (`opens`). Limited per person, since
 * each call posts to as many push services as the person has devices.
 */
export async function sendTestToAll(
  ctx: Ctx,
  userId: string,
  opens: keyof typeof TEST_OPENS,
): Promise<number> {
  ctx.limits.pushTests.take(userId)
  const payload = JSON.stringify(testPayload(opens))
  const sent = await ctx.writes.run(async (tx) => {
    const n = await tx.store.push.enqueueForUser(userId, null, payload, ctx.clock.now())
    if (n > 0) tx.after(() => ctx.push.kick())
    return n
  })
  if (sent === 0) {
    throw fail.conflict(
      'no device of yours gets notifications yet: turn them on on this device first ' +
        '(Settings → Notifications), then send the test',
    )
  }
  return sent
}

/**
 * A message was created (`message.created`, in its unit's transaction): one push is queued per
 * device of the channel's person, so a push is queued exactly when its message exists; the
 * worker sends it after the commit, off the agent's request. The person's own messages and an
 * agent's silent ones are not pushed.
 */
export async function pushCreated(ctx: Ctx, tx: Tx, event: MessageCreated): Promise<void> {
  const { channel, message } = event
  if (message.sender !== 'agent' || message.silent) return
  // No device, no push: most sends go to a person without one (or with the app open). Asked
  // first, a read by the index: building the payload and the INSERT ... SELECT that queues
  // nothing were ~15% of a send's time on the event loop's thread (bench/README.md, "The send
  // path").
  // Without the lock a subscribe counts under (`anyByUser`, push/pg-store.ts).
  if (!(await tx.store.push.anyByUser(channel.user_id))) return
  const payload = JSON.stringify(messagePayload(channel, message))
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
    ctx.log.warn(`push payload of ${message.id} is too large; not sent`)
    return
  }
  // The worker reads the queue once it is durable: no push for a message a crash takes back.
  const now = ctx.clock.now()
  if ((await tx.store.push.enqueueForUser(channel.user_id, message.id, payload, now)) > 0) {
    tx.after(() => ctx.push.kick())
  }
}

/**
 * A capability to answer one question from a notification: a random token whose hash alone
 * is stored. Minted per push when it is sent, so the plain token exists only inside the
 * encrypted payload. Undefined when the question is no longer open.
 */
export async function mintCapability(ctx: Ctx, messageId: string): Promise<string | undefined> {
  const row = await ctx.store.messages.byId(messageId)
  if (!row || row.deleted_at !== null || row.ask_status !== 'open') return undefined
  const now = ctx.clock.now()
  const expiresAt = Math.min(now + CAPABILITY_TTL_MS, row.ask_expires_at ?? Number.MAX_SAFE_INTEGER)
  if (expiresAt <= now) return undefined
  const token = CAPABILITY_PREFIX + randomBase62(43)
  await ctx.store.push.addCapability(hashToken(token), messageId, expiresAt)
  return token
}

const INVALID_CAPABILITY = 'capability: is unknown, already used or expired'

/**
 * POST /v1/push/answer: answers the question a capability was made for, without a session.
 * Every capability of the question dies with the answer (and when it is found closed), so a
 * replay or a second device's button fails.
 */
export async function answerWithCapability(
  ctx: Ctx,
  capability: string,
  answer: unknown,
): Promise<AskResult> {
  const found = await ctx.store.push.capability(hashToken(capability))
  if (!found || found.expires_at <= ctx.clock.now()) throw fail.forbidden(INVALID_CAPABILITY)
  const row = (await ctx.store.messages.byId(found.message_id)) as MessageRow | undefined
  const channel = row ? await ctx.store.channels.byId(row.channel_id) : undefined
  if (!row || !channel || row.deleted_at !== null) {
    await ctx.writes.apply(async (tx) => await tx.store.push.dropCapabilities(found.message_id))
    throw fail.forbidden(INVALID_CAPABILITY)
  }
  if ((await expireIfDue(ctx, row)).ask_status !== 'open') {
    await ctx.writes.apply(async (tx) => await tx.store.push.dropCapabilities(found.message_id))
    throw fail.conflict('the question is no longer open')
  }
  // An approval's Allow needs the person's passkey, in the app: a notification only denies.
  const approval = row.ask_request_hash !== null
  if (approval && (answer as { decision?: unknown } | null)?.decision !== 'deny') {
    throw fail.forbidden('answer: an approval is allowed in the app, signed with a passkey')
  }
  // Synchronous from the lookup to here (an unsigned answer settles before answerAsk's first
  // await): no other request can use the capability between.
  const result = await answerAsk(ctx, channel, row.id, answer, { via: 'notification' })
  await ctx.writes.apply(async (tx) => await tx.store.push.dropCapabilities(row.id))
  return result
}

export const MAX_REMINDER_MINUTES = 7 * 24 * 60

/** "Email me questions that wait unanswered for N minutes" (null: never). */
export async function setEmailReminders(
  ctx: Ctx,
  userId: string,
  minutes: number | null,
): Promise<number | null> {
  if (
    minutes !== null &&
    (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_REMINDER_MINUTES)
  ) {
    throw fail.invalid('minutes', `must be null or an integer from 1 to ${MAX_REMINDER_MINUTES}`)
  }
  if (minutes !== null && !ctx.mailer) {
    throw fail.unavailable('email reminders need an SMTP server (--smtp-url)')
  }
  await ctx.writes.apply(
    async (tx) => await tx.store.push.setReminder(userId, minutes, ctx.clock.now()),
  )
  return minutes
}
