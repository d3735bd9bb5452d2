import { Elysia, t } from 'elysia'
import { doc } from '../../core/docs.ts'
import { fail } from '../../core/errors.ts'
import { optionalJson } from '../../core/http/optional-body.ts'
import { holdOpen } from '../../core/longpoll.ts'
import { parseWait } from '../../core/query.ts'
import { WriteLimiter } from '../../core/rate-limit.ts'
import { requestIp } from '../../core/request-ip.ts'
import type { Ctx } from '../../server/context.ts'
import { personAuth } from '../guards.ts'
import type { PersonAuth } from '../tokens/service.ts'
import {
  approvePairing,
  denyPairing,
  findPendingPairing,
  pairingView,
  pollPairing,
  startPairing,
} from './pairing.ts'
import { PairingCodeGuard } from './pairing-limits.ts'

const CodeParams = t.Object({ code: t.String() })

/** `hark init`'s device flow: the CLI's public half, and the person's approve/deny. */
export const pairingRoutes = (ctx: Ctx) => {
  // Starting a pairing is public: a few per minute per address is plenty for a person.
  const starts = new WriteLimiter(10, () => ctx.clock.now())
  const agentSide = new Elysia({ name: 'hark/pairing' })
    .post(
      '/v1/pair/start',
      ({ body, request }) => {
        const retryAfter = starts.take(requestIp(ctx, request))
        if (retryAfter > 0) throw fail.rateLimited(retryAfter)
        return startPairing(ctx, body.label)
      },
      {
        parse: optionalJson,
        body: t.Object({ label: t.Optional(t.String()) }),
        detail: doc('pairing', 'Start pairing an agent (device flow)', undefined, false),
      },
    )
    .post(
      '/v1/pair/token',
      ({ body, query, request }) => {
        const waitMs = parseWait(query.wait)
        holdOpen(ctx, request, waitMs)
        return pollPairing(ctx, body.device_code, waitMs, request.signal)
      },
      {
        body: t.Object({ device_code: t.String() }),
        query: t.Object({ wait: t.Optional(t.String()) }),
        detail: doc(
          'pairing',
          "Wait for the person's approval; receive the token once",
          undefined,
          false,
        ),
      },
    )
  // Looking a code up, approving or denying it: a miss is counted (see `PAIRING_LIMITS`).
  const guard = new PairingCodeGuard(ctx)
  const byCode = <T>(person: PersonAuth, request: Request, lookUp: () => T): T =>
    guard.attempt(person.user.id, requestIp(ctx, request), lookUp)
  const personSide = new Elysia({ name: 'hark/pairing-approval', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .get(
      '/pairings/:code',
      ({ person, params, request }) =>
        byCode(person, request, () => ({
          pairing: pairingView(findPendingPairing(ctx, params.code)),
        })),
      {
        params: CodeParams,
        detail: doc('pairing', 'See a pending pairing'),
      },
    )
    .post(
      '/pairings/:code/approve',
      ({ person, params, body, request }) =>
        byCode(person, request, () => approvePairing(ctx, person, params.code, body.label)),
      {
        params: CodeParams,
        parse: optionalJson,
        body: t.Object({ label: t.Optional(t.String()) }),
        detail: doc('pairing', 'Approve a pairing, naming the agent'),
      },
    )
    .post(
      '/pairings/:code/deny',
      ({ person, params, request }) =>
        byCode(person, request, () => denyPairing(ctx, person, params.code)),
      {
        params: CodeParams,
        detail: doc('pairing', 'Deny a pairing'),
      },
    )
  return new Elysia({ name: 'hark/pairing-all' }).use(agentSide).use(personSide)
}
