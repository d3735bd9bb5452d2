import { Elysia } from 'elysia'
import { limitedByAddress } from '../../../access/guards.ts'
import { checkOrigin } from '../../../access/sessions/service.ts'
import { requestIp } from '../../../core/client-address.ts'
import type { Ctx } from '../../../core/context.ts'
import { doc } from '../../../core/docs.ts'
import { signedIn, signInDoc } from '../../schema.ts'
import { StartRequest, StartResponse, VerifyRequest } from './schema.ts'
import { requireMailer, startEmailCode, verifyEmailCode } from './service.ts'

/** Email login codes: public routes, the way in for people without a passkey. */
export const emailRoutes = (ctx: Ctx) => {
  const limits = ctx.limits.email

  /**
   * Checks that run before the body is read (Elysia's transform stage), so that a foreign page,
   * a server without email, or a client over its limit gets that answer whatever it sends. A
   * browser always sends Origin on a cross-site POST; a script need not send one at all.
   */
  const guard = (request: Request, limit: 'startsPerIp' | 'verifiesPerIp') => {
    if (request.headers.has('origin')) checkOrigin(ctx, request)
    requireMailer(ctx)
    limitedByAddress(ctx, limits[limit])({ request })
  }
  const requester = (request: Request) => ({ ip: requestIp(ctx, request) })

  return new Elysia({ name: 'hark/email', prefix: '/v1/auth/email' })
    .post('/start', ({ body, request }) => startEmailCode(ctx, limits, requester(request), body), {
      transform: ({ request }) => guard(request, 'startsPerIp'),
      body: StartRequest,
      detail: doc('startEmailLogin', 'auth', 'Mail a login or sign-up code', StartResponse, {
        public: true,
        errors: [403, 409, 429],
      }),
    })
    .post(
      '/verify',
      async ({ body, request, set }) => {
        const { user, setCookie } = await verifyEmailCode(
          ctx,
          requester(request),
          body,
          request.headers.get('user-agent'),
        )
        set.headers['set-cookie'] = setCookie
        set.headers['cache-control'] = 'no-store'
        return signedIn(user)
      },
      {
        transform: ({ request }) => guard(request, 'verifiesPerIp'),
        body: VerifyRequest,
        detail: signInDoc('verifyEmailLogin', 'Trade a mailed code for a session', [401, 403, 429]),
      },
    )
}
