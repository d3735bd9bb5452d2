import { type Static, Type as t } from '@sinclair/typebox'
import { CODE_DIGITS, CODE_TTL_MS, PURPOSES } from './codes.ts'

/** Checked by `parsePurpose`, for a clearer error; `enum` documents it. */
const Purpose = t.String({
  enum: [...PURPOSES],
  description: '`login` for an existing account, `signup` to create one',
})

export const StartRequest = t.Object({
  email: t.String({ description: 'where the code goes' }),
  purpose: Purpose,
  name: t.Optional(t.String({ maxLength: 100, description: 'signup: how the person is called' })),
  setup_token: t.Optional(t.String({ description: 'signup on a fresh server: the setup token' })),
  invite: t.Optional(t.String({ description: 'signup with an invite: its code' })),
})
export type StartRequest = Static<typeof StartRequest>

export const StartResponse = t.Object({
  ok: t.Literal(true),
  expires_in: t.Number({ description: `seconds the code lives (${CODE_TTL_MS / 1000})` }),
})
export type StartResponse = Static<typeof StartResponse>

export const VerifyRequest = t.Object({
  email: t.String(),
  purpose: Purpose,
  code: t.String({ description: `the ${CODE_DIGITS} digits from the mail (spaces allowed)` }),
})
export type VerifyRequest = Static<typeof VerifyRequest>
