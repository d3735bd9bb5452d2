import type { Static } from '@sinclair/typebox'
import { Type as t } from '@sinclair/typebox'
import { listResponse, wrappedResponse } from '../core/docs.ts'

export const SubscribeRequest = t.Object(
  {
    endpoint: t.String({ minLength: 1, maxLength: 2000, description: "the push service's URL" }),
    keys: t.Object({
      p256dh: t.String({
        minLength: 1,
        maxLength: 200,
        description: "base64url of the device's P-256 public key, uncompressed (65 bytes)",
      }),
      auth: t.String({
        minLength: 1,
        maxLength: 100,
        description: 'base64url of the 16-byte auth secret',
      }),
    }),
    name: t.Optional(
      t.String({ maxLength: 100, description: 'what the person calls this device' }),
    ),
    // A browser's PushSubscription.toJSON() carries this; accepted and ignored.
    expirationTime: t.Optional(t.Union([t.Number(), t.Null()])),
  },
  { $id: 'SubscribeRequest' },
)
export type SubscribeRequest = Static<typeof SubscribeRequest>

export const PushDevice = t.Object(
  {
    id: t.String(),
    name: t.Union([t.String(), t.Null()]),
    browser: t.String({ description: 'from the User-Agent it subscribed with' }),
    created_at: t.Integer(),
    last_success_at: t.Union([t.Integer(), t.Null()]),
  },
  { $id: 'PushDevice' },
)
export type PushDevice = Static<typeof PushDevice>

export const DeviceResponse = wrappedResponse('DeviceResponse', 'subscription', PushDevice)
export const DevicesResponse = listResponse('DevicesResponse', 'subscriptions', PushDevice)

export const AnswerByCapability = t.Object(
  {
    capability: t.String({ minLength: 1, maxLength: 200 }),
    answer: t.Unknown(),
  },
  { $id: 'AnswerByCapability' },
)

export const EmailReminders = t.Object(
  {
    minutes: t.Union([t.Number(), t.Null()], {
      description: 'email a question still open after this many minutes; null turns it off',
    }),
  },
  { $id: 'EmailReminders' },
)

export const PushTestRequest = t.Object(
  {
    opens: t.Optional(
      t.Union([t.Literal('settings'), t.Literal('setup')], {
        description:
          'the page a tap on the test notification opens: settings (default) or the setup wizard',
      }),
    ),
  },
  { $id: 'PushTestRequest' },
)

export const PushTestResponse = t.Object(
  { sent: t.Integer({ description: 'how many devices the test notification was queued for' }) },
  { $id: 'PushTestResponse' },
)
