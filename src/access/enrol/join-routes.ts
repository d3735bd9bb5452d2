import { Elysia, t } from 'elysia'
import { doc } from '../../core/docs.ts'
import { fail } from '../../core/errors.ts'
import { optionalJson } from '../../core/http/optional-body.ts'
import { WriteLimiter } from '../../core/rate-limit.ts'
import { requestIp } from '../../core/request-ip.ts'
import type { Ctx } from '../../server/context.ts'
import { personAuth } from '../guards.ts'
import { createJoinLink, redeemJoinLink } from './join.ts'

/** Join links: the person makes one; `hark join` redeems it for a token. */
export const joinRoutes = (ctx: Ctx) => {
  // Redeeming is public; bound guessing (the codes are 190 bits anyway).
  const redeems = new WriteLimiter(20, () => ctx.clock.now())
  const redeem = new Elysia({ name: 'hark/join' }).post(
    '/v1/join',
    ({ body, request }) => {
      const retryAfter = redeems.take(requestIp(ctx, request))
      if (retryAfter > 0) throw fail.rateLimited(retryAfter)
      return redeemJoinLink(ctx, body.code)
    },
    {
      body: t.Object({ code: t.String() }),
      detail: doc('pairing', 'Redeem a join link for an agent token', undefined, false),
    },
  )
  const create = new Elysia({ name: 'hark/join-links', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .post('/join-links', ({ person, body }) => createJoinLink(ctx, person, body), {
      parse: optionalJson,
      body: t.Object({ label: t.Optional(t.String()), channel_id: t.Optional(t.String()) }),
      detail: doc('pairing', 'Make a single-use join link (new channel, or re-key one)'),
    })
  return new Elysia({ name: 'hark/join-all' }).use(redeem).use(create)
}
