import { Elysia, t } from 'elysia'
import { personAuth } from '../access/guards.ts'
import { type PersonAuth, requireSession } from '../access/person.ts'
import { channelsGone, heldKeys } from '../channels/service.ts'
import type { Ctx } from '../core/context.ts'
import { doc } from '../core/docs.ts'
import { fail } from '../core/errors.ts'
import { done } from '../core/http/ok.ts'
import { createInvite, listInvites, revokeInvite } from './invites.ts'
import { registrationMode, setRegistrationMode } from './settings.ts'
import type { UserRow } from './store.ts'

export const personView = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  is_owner: u.is_owner === 1,
  created_at: u.created_at,
})

function requireOwner(person: PersonAuth): void {
  if (!person.user.is_owner) throw fail.forbidden('only the owner can do this')
}

/** Removes a person (never the owner) with their channels, messages, tokens and files. */
async function removePerson(ctx: Ctx, person: PersonAuth, id: string): Promise<void> {
  requireSession(person, 'removing a person')
  requireOwner(person)
  const user = await ctx.store.users.byId(id)
  if (!user) throw fail.notFound('person')
  if (user.is_owner) throw fail.forbidden('the owner cannot be removed')
  await ctx.writes.apply(async (tx) => {
    const channels = (await tx.store.channels.byUser(id)).map((c) => c.id)
    const held: string[] = []
    for (const c of channels) held.push(...(await heldKeys(tx, c)))
    await tx.store.users.remove(id)
    channelsGone(ctx, tx, channels, held)
  })
}

const IdParams = t.Object({ id: t.String() })

/** Who I am, the people on this server, registration, and invites. */
export const peopleRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/people', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .get('/me', ({ person }) => ({ user: personView(person.user) }), {
      detail: doc('getMe', 'people', 'Who am I'),
    })
    .get(
      '/people',
      async ({ person }) => {
        requireOwner(person)
        return { people: (await ctx.store.users.all()).map(personView) }
      },
      { detail: doc('listPeople', 'people', 'List people (owner)') },
    )
    .delete(
      '/people/:id',
      ({ person, params }) => done(async () => await removePerson(ctx, person, params.id)),
      {
        params: IdParams,
        detail: doc(
          'removePerson',
          'people',
          'Remove a person and their channels (owner; browser session only)',
          undefined,
          { session: true, errors: [409] },
        ),
      },
    )
    .get('/settings', async () => ({ registration: await registrationMode(ctx) }), {
      detail: doc('getSettings', 'people', 'Server settings'),
    })
    .patch(
      '/settings',
      async ({ person, body }) => {
        // Opening the server to anyone is the owner's decision in the app, not a script's.
        requireSession(person, 'changing registration')
        requireOwner(person)
        return { registration: await setRegistrationMode(ctx, body.registration) }
      },
      {
        body: t.Object({ registration: t.String() }),
        detail: doc(
          'setRegistration',
          'people',
          'Change registration: closed, invite or open (owner; browser session only)',
          undefined,
          { session: true },
        ),
      },
    )
    .get('/invites', async ({ person }) => ({ invites: await listInvites(ctx, person) }), {
      detail: doc('listInvites', 'people', 'Open invites'),
    })
    .post('/invites', async ({ person, body }) => await createInvite(ctx, person, body), {
      body: t.Object({ email: t.Optional(t.String()), expires_in: t.Optional(t.Number()) }),
      detail: doc(
        'createInvite',
        'people',
        'Make a single-use invite link (browser session only)',
        undefined,
        { session: true },
      ),
    })
    .delete(
      '/invites/:id',
      ({ person, params }) => done(async () => await revokeInvite(ctx, person, params.id)),
      { params: IdParams, detail: doc('revokeInvite', 'people', 'Revoke an invite') },
    )
