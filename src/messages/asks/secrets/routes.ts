import { Elysia, t } from 'elysia'
import { agentAuth, personAuth } from '../../../access/guards.ts'
import { retrySafe } from '../../../access/idempotency/service.ts'
import type { Ctx } from '../../../core/context.ts'
import { doc } from '../../../core/docs.ts'
import { fail } from '../../../core/errors.ts'
import { holderOf } from '../../../core/holds.ts'
import { longPoll } from '../../../core/longpoll.ts'
import { parseWait } from '../../../core/query.ts'
import { CreateSecretRequest, FulfilRequest, SecretQuery, SecretResponse } from './schema.ts'
import {
  cancelSecret,
  checkSecret,
  fulfilSecret,
  personSecret,
  readSecret,
  recordSecret,
  secretOf,
} from './service.ts'

const IdParams = t.Object({ id: t.String() })

/** The agent asks for a secret, long-polls for its ciphertext (delivered once), or withdraws. */
export const secretRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/secrets', prefix: '/v1' })
    .use(agentAuth(ctx))
    .post(
      '/secrets',
      async (c) => {
        // The checks that await something else than stores come first (a unit awaits only its
        // stores): the write and its idempotency key are then one unit.
        const checked = await checkSecret(c.body)
        return await retrySafe(ctx, c, async () => ({
          secret_request: secretOf(await recordSecret(ctx, c.agent.channel, checked)),
        }))
      },
      {
        body: CreateSecretRequest,
        detail: doc(
          'requestSecret',
          'secrets',
          'Ask the person for a secret (end-to-end encrypted)',
          SecretResponse,
        ),
      },
    )
    .get(
      '/secrets/:id',
      ({ agent, params, query, request }) => {
        const waitMs = parseWait(query.wait)
        return longPoll(ctx, request, holderOf(agent), waitMs, (signal) =>
          readSecret(ctx, agent.channel, params.id, waitMs, signal),
        )
      },
      {
        params: IdParams,
        query: SecretQuery,
        detail: doc(
          'getSecret',
          'secrets',
          'Read a secret request; its ciphertext once (long-poll)',
          SecretResponse,
        ),
      },
    )
    .delete(
      '/secrets/:id',
      async ({ agent, params }) => ({
        secret_request: secretOf(await cancelSecret(ctx, agent.channel, params.id)),
      }),
      {
        params: IdParams,
        detail: doc('cancelSecret', 'secrets', 'Cancel a secret request', SecretResponse, {
          errors: [409],
        }),
      },
    )

/** The person sees a request in their channel and answers it with ciphertext only. */
export const personSecretRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/person-secrets', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .get(
      '/secrets/:id',
      async ({ person, params }) => ({
        secret_request: secretOf(await personSecret(ctx, person.user.id, params.id)),
      }),
      {
        params: IdParams,
        detail: doc(
          'getSecretRequest',
          'person',
          'A secret request and its public key',
          SecretResponse,
        ),
      },
    )
    .post(
      '/secrets/:id/fulfil',
      async ({ person, params, body }) => {
        // A passkey signs in the app; a script's person token fulfils, but never with a proof.
        if (body.proof && !person.session) {
          throw fail.forbidden('proof: signed answers come from the app (a browser session)')
        }
        return {
          secret_request: secretOf(
            await fulfilSecret(ctx, person.user.id, params.id, body.ciphertext, body.proof),
          ),
        }
      },
      {
        params: IdParams,
        body: FulfilRequest,
        detail: doc(
          'fulfilSecret',
          'person',
          'Answer a secret request with ciphertext',
          SecretResponse,
          { errors: [403, 409] },
        ),
      },
    )
