import { type Static, Type as t } from '@sinclair/typebox'
import { doc, type ErrorStatus } from '../core/docs.ts'
import type { UserRow } from './store.ts'

/** What a successful login or sign-up answers (next to its session cookie). */
export const SignedInUser = t.Object(
  {
    user: t.Object({
      id: t.String(),
      email: t.String(),
      name: t.Union([t.String(), t.Null()]),
      is_owner: t.Boolean(),
    }),
  },
  { $id: 'SignedInUser' },
)
export type SignedInUser = Static<typeof SignedInUser>

/** The OpenAPI details of a public route that signs a person in, answering `SignedInUser`. */
export const signInDoc = (id: string, summary: string, errors: readonly ErrorStatus[]) =>
  doc(id, 'auth', summary, SignedInUser, { public: true, errors })

export const signedIn = (user: UserRow): SignedInUser => ({
  user: { id: user.id, email: user.email, name: user.name, is_owner: user.is_owner === 1 },
})
