import { Elysia, t } from 'elysia'
import { limitedByAddress, personAuth } from '../../access/guards.ts'
import type { PersonAuth } from '../../access/person.ts'
import { requestIp } from '../../core/client-address.ts'
import type { Ctx } from '../../core/context.ts'
import { doc } from '../../core/docs.ts'
import { holderOf } from '../../core/holds.ts'
import { holdOpen, longPoll } from '../../core/longpoll.ts'
import { parseWait } from '../../core/query.ts'
import {
  approvePairing,
  denyPairing,
  findPendingPairing,
  pairingView,
  pollPairing,
  startPairing,
  watchPendingPairings,
} from './pairing.ts'

const CodeParams = t.Object({ code: t.String() })
/** The agent's name: what the CLI suggests when pairing starts, what the person approves it as. */
const LabelBody = t.Object({ label: t.Optional(t.String()) })
const StartBody = t.Object({
  label: t.Optional(t.String()),
  host: t.Optional(
    t.String({ description: "the machine's host name, shown to the person who approves" }),
  ),
})
const PendingQuery = t.Object({
  wait: t.Optional(t.String()),
  version: t.Optional(
    t.String({ description: 'the `version` of the list the app shows: wait until it differs' }),
  ),
})

/** `hark init`'s device flow: the CLI's public half, and the person's approve/deny. */
export const pairingRoutes = (ctx: Ctx) => {
  const agentSide = new Elysia({ name: 'hark/pairing' })
    .post(
      '/v1/pair/start',
      async ({ body, request }) => await startPairing(ctx, body, requestIp(ctx, request)),
      {
        transform: limitedByAddress(ctx, ctx.limits.pairStarts),
        body: StartBody,
        detail: doc('startPairing', 'pairing', 'Start pairing an agent (device flow)', undefined, {
          public: true,
          errors: [429],
        }),
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
          'waitForPairing',
          'pairing',
          "Wait for the person's approval; receive the token once",
          undefined,
          { public: true, errors: [403, 404, 429] },
        ),
      },
    )
  // Looking a code up, approving or denying it: a miss is counted (see `PAIRING_LIMITS`).
  const guard = ctx.limits.pairingCodes
  const byCode = <T>(person: PersonAuth, request: Request, lookUp: () => Promise<T>) =>
    guard.attempt(person.user.id, requestIp(ctx, request), lookUp)
  const personSide = new Elysia({ name: 'hark/pairing-approval', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .get(
      '/pairings',
      ({ person, query, request }) => {
        const waitMs = parseWait(query.wait)
        return longPoll(ctx, request, holderOf(person), waitMs, (signal) =>
          watchPendingPairings(ctx, person, query.version, waitMs, signal),
        )
      },
      {
        query: PendingQuery,
        detail: doc(
          'listPendingPairings',
          'pairing',
          'The pairings waiting for an answer, with where they come from (owner; long-poll)',
          undefined,
          { errors: [403] },
        ),
      },
    )
    .get(
      '/pairings/:code',
      ({ person, params, request }) =>
        byCode(person, request, async () => ({
          pairing: pairingView(await findPendingPairing(ctx, params.code)),
        })),
      {
        params: CodeParams,
        detail: doc('getPairing', 'pairing', 'See a pending pairing'),
      },
    )
    .post(
      '/pairings/:code/approve',
      ({ person, params, body, request }) =>
        byCode(
          person,
          request,
          async () => await approvePairing(ctx, person, params.code, body.label),
        ),
      {
        params: CodeParams,
        body: LabelBody,
        detail: doc('approvePairing', 'pairing', 'Approve a pairing, naming the agent', undefined, {
          session: true,
          errors: [409],
        }),
      },
    )
    .post(
      '/pairings/:code/deny',
      ({ person, params, request }) =>
        byCode(person, request, async () => await denyPairing(ctx, person, params.code)),
      {
        params: CodeParams,
        detail: doc('denyPairing', 'pairing', 'Deny a pairing', undefined, { errors: [409] }),
      },
    )
  return new Elysia({ name: 'hark/pairing-all' }).use(agentSide).use(personSide)
}
