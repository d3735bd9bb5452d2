import { Elysia, t } from 'elysia'
import type { Ctx } from '../../core/context.ts'
import { doc } from '../../core/docs.ts'
import { done } from '../../core/http/ok.ts'
import { personAuth } from '../guards.ts'
import { createPersonToken, listTokens, revokeToken, rotateToken } from './service.ts'

const IdParams = t.Object({ id: t.String() })

/**
 * The person's tokens: list, make (person tokens), revoke and rotate (any of theirs). Making and
 * rotating need a browser session (403 with a person token); listing and revoking do not.
 */
export const tokenRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/tokens', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .get('/tokens', async ({ person }) => ({ tokens: await listTokens(ctx, person) }), {
      detail: doc('listTokens', 'tokens', 'List my live tokens'),
    })
    .post('/tokens', async ({ person, body }) => await createPersonToken(ctx, person, body.label), {
      body: t.Object({ label: t.Optional(t.String()) }),
      detail: doc(
        'createToken',
        'tokens',
        'Make a person token (shown once; browser session only)',
        undefined,
        { session: true },
      ),
    })
    .delete(
      '/tokens/:id',
      ({ person, params }) => done(async () => await revokeToken(ctx, person, params.id)),
      { params: IdParams, detail: doc('revokeToken', 'tokens', 'Revoke a token') },
    )
    .post(
      '/tokens/:id/rotate',
      async ({ person, params }) => await rotateToken(ctx, person, params.id),
      {
        params: IdParams,
        detail: doc(
          'rotateToken',
          'tokens',
          'Rotate a token (shown once; browser session only)',
          undefined,
          { session: true },
        ),
      },
    )
