import { Elysia, t } from 'elysia'
import { agentRoutes, personRoutes } from '../../../access/guards.ts'
import { retrySafe } from '../../../access/idempotency/service.ts'
import type { Ctx } from '../../../core/context.ts'
import { doc } from '../../../core/docs.ts'
import { fail } from '../../../core/errors.ts'
import {
  CreatePolicyRequest,
  PoliciesResponse,
  PolicyResponse,
  RevokePolicyRequest,
  UseRequest,
} from './schema.ts'
import {
  channelPolicies,
  createPolicy,
  listPolicies,
  policyOf,
  recordUse,
  revokePolicy,
} from './service.ts'

const IdParams = t.Object({ id: t.String() })

/** The agent reads the policies it is named in (and their revocations) and reports a use. */
const agentSide = (ctx: Ctx) =>
  agentRoutes(ctx)
    .get(
      '/policies',
      async ({ agent }) => ({ policies: await channelPolicies(ctx, agent.channel) }),
      {
        detail: doc(
          'listChannelPolicies',
          'policies',
          'The signed approval policies this agent is named in (the agent verifies each)',
          PoliciesResponse,
        ),
      },
    )
    .post(
      '/policies/:id/uses',
      async (c) =>
        await retrySafe(ctx, c, async () => ({
          policy: policyOf(await recordUse(ctx, c.agent.channel, c.params.id, c.body.summary)),
        })),
      {
        params: IdParams,
        body: UseRequest,
        detail: doc(
          'recordPolicyUse',
          'policies',
          'Report an action decided by a policy (one quiet line in the thread)',
          PolicyResponse,
        ),
      },
    )

/** The person signs a policy in the app, lists them, and revokes one (signed too). */
const personSide = (ctx: Ctx) =>
  personRoutes(ctx)
    .get(
      '/policies',
      async ({ person }) => ({ policies: await listPolicies(ctx, person.user.id) }),
      {
        detail: doc('listMyPolicies', 'person', 'Your approval policies', PoliciesResponse),
      },
    )
    .post(
      '/policies',
      async ({ person, body }) => {
        // A passkey signs in the app; a person token (a script) cannot, and must not try.
        if (!person.session)
          throw fail.forbidden('policies are signed in the app (a browser session)')
        return { policy: policyOf(await createPolicy(ctx, person.user.id, body.claim, body.proof)) }
      },
      {
        body: CreatePolicyRequest,
        detail: doc('createPolicy', 'person', 'Add a signed approval policy', PolicyResponse, {
          session: true,
          errors: [409],
        }),
      },
    )
    .post(
      '/policies/:id/revoke',
      async ({ person, params, body }) => {
        if (!person.session)
          throw fail.forbidden('revocations are signed in the app (a browser session)')
        return {
          policy: policyOf(
            await revokePolicy(ctx, person.user.id, params.id, body.claim, body.proof),
          ),
        }
      },
      {
        params: IdParams,
        body: RevokePolicyRequest,
        detail: doc(
          'revokePolicy',
          'person',
          'Revoke an approval policy (signed)',
          PolicyResponse,
          {
            session: true,
          },
        ),
      },
    )

export const policyRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/policies' }).use(agentSide(ctx)).use(personSide(ctx))
