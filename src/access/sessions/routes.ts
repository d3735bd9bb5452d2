import { Elysia, t } from 'elysia'
import type { Ctx } from '../../core/context.ts'
import { doc } from '../../core/docs.ts'
import { done } from '../../core/http/ok.ts'
import { personAuth } from '../guards.ts'
import { clearCookie, endAllSessions, endSession, listSessions } from './service.ts'

/** The person's sessions: see them, end one, log out, log out everywhere. */
export const sessionRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/sessions', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .get(
      '/sessions',
      async ({ person }) => ({
        sessions: (await listSessions(ctx, person.user.id)).map((s) => ({
          id: s.id,
          user_agent: s.user_agent,
          created_at: s.created_at,
          last_seen_at: s.last_seen_at,
          current: s.id === person.session?.id,
        })),
      }),
      { detail: doc('listSessions', 'sessions', 'List my sessions') },
    )
    .delete(
      '/sessions/:id',
      ({ person, params }) => done(async () => await endSession(ctx, person.user.id, params.id)),
      {
        params: t.Object({ id: t.String() }),
        detail: doc('endSession', 'sessions', 'End a session'),
      },
    )
    .post(
      '/logout',
      async ({ person, set }) => {
        if (person.session) await endSession(ctx, person.user.id, person.session.id)
        set.headers['set-cookie'] = clearCookie(ctx)
        return { ok: true as const }
      },
      { detail: doc('logOut', 'sessions', 'Log out (this session)') },
    )
    .post(
      '/logout-all',
      async ({ person, set }) => {
        await endAllSessions(ctx, person.user.id)
        set.headers['set-cookie'] = clearCookie(ctx)
        return { ok: true as const }
      },
      { detail: doc('logOutEverywhere', 'sessions', 'Log out everywhere') },
    )
