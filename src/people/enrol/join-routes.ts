import { Elysia, t } from 'elysia'
import { limitedByAddress, personAuth } from '../../access/guards.ts'
import type { Ctx } from '../../core/context.ts'
import { doc } from '../../core/docs.ts'
import { createJoinLink, redeemJoinLink } from './join.ts'

/** Join links: the person makes one; `hark join` redeems it for a token. */
export const joinRoutes = (ctx: Ctx) => {
  const redeem = new Elysia({ name: 'hark/join' }).post(
    '/v1/join',
    async ({ body }) => await redeemJoinLink(ctx, body.code),
    {
      transform: limitedByAddress(ctx, ctx.limits.joinRedeems),
      body: t.Object({ code: t.String() }),
      detail: doc('redeemJoinLink', 'pairing', 'Redeem a join link for an agent token', undefined, {
        public: true,
        errors: [403, 404, 429],
      }),
    },
  )
  const create = new Elysia({ name: 'hark/join-links', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .post('/join-links', async ({ person, body }) => await createJoinLink(ctx, person, body), {
      body: t.Object({ label: t.Optional(t.String()), channel_id: t.Optional(t.String()) }),
      detail: doc(
        'createJoinLink',
        'pairing',
        'Make a single-use join link (new channel, or re-key one)',
        undefined,
        { session: true },
      ),
    })
  return new Elysia({ name: 'hark/join-all' }).use(redeem).use(create)
}
