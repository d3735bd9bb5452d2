import { Elysia, t } from 'elysia'
import { personAuth } from '../access/guards.ts'
import { requireSession } from '../access/person.ts'
import type { Ctx } from '../core/context.ts'
import { doc } from '../core/docs.ts'
import { done } from '../core/http/ok.ts'
import { AskResponse } from '../messages/asks/schema.ts'
import {
  AnswerByCapability,
  DeviceResponse,
  DevicesResponse,
  EmailReminders,
  PushTestRequest,
  PushTestResponse,
  SubscribeRequest,
} from './schema.ts'
import {
  answerWithCapability,
  listDevices,
  MAX_PUSH_DEVICES,
  removeDevice,
  sendTest,
  sendTestToAll,
  setEmailReminders,
  subscribe,
} from './service.ts'

const IdParams = t.Object({ id: t.String() })
const Ok = t.Object({ ok: t.Literal(true) })

/** The person's devices for web push, and their email reminders. */
export const pushRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/push', prefix: '/v1/app/push' })
    .use(personAuth(ctx))
    .get(
      '/subscriptions',
      async ({ person }) => ({ subscriptions: await listDevices(ctx, person.user.id) }),
      {
        detail: doc(
          'listPushDevices',
          'push',
          'My devices that get notifications',
          DevicesResponse,
        ),
      },
    )
    .post(
      '/subscriptions',
      async ({ person, body, request }) => {
        // A device gets every question, and a capability to answer it, until it is removed:
        // registered by a leaked token, it would outlive the token's revocation.
        requireSession(person, 'turning on notifications')
        return {
          subscription: await subscribe(
            ctx,
            person.user.id,
            body,
            request.headers.get('user-agent'),
          ),
        }
      },
      {
        body: SubscribeRequest,
        detail: doc(
          'subscribePush',
          'push',
          `Register this device's push subscription (at most ${MAX_PUSH_DEVICES} devices a person; browser session only)`,
          DeviceResponse,
          { session: true, errors: [409] },
        ),
      },
    )
    .delete(
      '/subscriptions/:id',
      ({ person, params }) => done(async () => await removeDevice(ctx, person.user.id, params.id)),
      {
        params: IdParams,
        detail: doc('unsubscribePush', 'push', 'Stop notifications to a device', Ok),
      },
    )
    .post(
      '/test',
      async ({ person, body }) => ({
        sent: await sendTestToAll(ctx, person.user.id, body.opens ?? 'settings'),
      }),
      {
        body: PushTestRequest,
        detail: doc(
          'testPush',
          'push',
          'Send a test notification to every device of mine (tapped, it opens the app)',
          PushTestResponse,
          { errors: [409, 429] },
        ),
      },
    )
    .post(
      '/subscriptions/:id/test',
      ({ person, params }) => done(async () => await sendTest(ctx, person.user.id, params.id)),
      {
        params: IdParams,
        detail: doc('testPushDevice', 'push', 'Send a test notification to a device', Ok),
      },
    )
    .get(
      '/email-reminders',
      async ({ person }) => ({
        minutes: await ctx.store.push.reminderMinutes(person.user.id),
        available: ctx.mailer !== undefined,
      }),
      { detail: doc('getEmailReminders', 'push', 'My email reminder setting') },
    )
    .patch(
      '/email-reminders',
      async ({ person, body }) => ({
        minutes: await setEmailReminders(ctx, person.user.id, body.minutes),
      }),
      {
        body: EmailReminders,
        detail: doc(
          'setEmailReminders',
          'push',
          'Email me questions that wait unanswered for N minutes',
        ),
      },
    )

/**
 * Answering from a notification: the service worker has no session cookie to rely on, so it
 * presents the single-use capability that came inside the (encrypted) push.
 */
export const pushAnswerRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/push-answer', prefix: '/v1/push' }).post(
    '/answer',
    ({ body }) => answerWithCapability(ctx, body.capability, body.answer),
    {
      body: AnswerByCapability,
      detail: doc(
        'answerByCapability',
        'push',
        'Answer a question with a notification capability',
        AskResponse,
        { public: true, errors: [403, 404, 409, 429] },
      ),
    },
  )
