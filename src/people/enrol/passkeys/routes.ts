import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import type { Static } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { limitedByAddress, personAuth } from '../../../access/guards.ts'
import {
  CeremonyOptions,
  LoginVerifyRequest,
  PasskeyParams,
  PasskeyResponse,
  PasskeysResponse,
  RegisterVerifyRequest,
  RenamePasskeyRequest,
  SignInLinkOptionsRequest,
  SignUpOptionsRequest,
} from '../../../access/passkeys/schema.ts'
import { requireSession } from '../../../access/person.ts'
import { checkOrigin } from '../../../access/sessions/service.ts'
import type { Ctx } from '../../../core/context.ts'
import { type DocOptions, doc } from '../../../core/docs.ts'
import { done } from '../../../core/http/ok.ts'
import { Ok } from '../../../messages/schema.ts'
import { signedIn, signInDoc } from '../../schema.ts'
import type { UserRow } from '../../store.ts'
import { signInLinkOptions, signInWithLink } from '../sign-in-links.ts'
import {
  addPasskey,
  addPasskeyOptions,
  listPasskeys,
  logIn,
  loginOptions,
  type NewPasskeyRequest,
  removePasskey,
  renamePasskey,
  signUp,
  signUpOptions,
} from './service.ts'

/**
 * Ends a ceremony in a session, started for the browser that sent `request`: answers with the
 * person, and the new session's cookie.
 */
async function startSession(
  request: Request,
  finish: (userAgent: string | null) => Promise<{ user: UserRow; setCookie: string }>,
) {
  const result = await finish(request.headers.get('user-agent'))
  return new Response(JSON.stringify(signedIn(result.user)), {
    headers: { 'content-type': 'application/json; charset=utf-8', 'set-cookie': result.setCookie },
  })
}

/** The docs of a public route that starts a ceremony (it answers the browser's options). */
const startDoc = (id: string, summary: string, errors: DocOptions['errors']) =>
  doc(id, 'auth', summary, CeremonyOptions, { public: true, errors })

/**
 * The handler that finishes a ceremony creating a passkey (sign-up, sign-in link) with
 * `finish`, in a session for the browser that sent it.
 */
const finishCreation =
  (
    ctx: Ctx,
    finish: (
      ctx: Ctx,
      req: NewPasskeyRequest,
      userAgent: string | null,
    ) => Promise<{ user: UserRow; setCookie: string }>,
  ) =>
  ({ body, request }: { body: Static<typeof RegisterVerifyRequest>; request: Request }) => {
    // The schema checks the response's outline; SimpleWebAuthn checks the rest.
    const response = body.response as RegistrationResponseJSON
    return startSession(request, (userAgent) => finish(ctx, { ...body, response }, userAgent))
  }

/**
 * Sign-up and login ceremonies: public, no session yet. Browsers send Origin on these
 * POSTs; when one is present it must be ours, so another site cannot drive a sign-up or
 * plant its own session (login CSRF). Checked before the body is validated, like the limit on
 * starting ceremonies per client address (`PASSKEY_LIMITS`): over it, 429 whatever is sent.
 */
const ceremonies = (ctx: Ctx) => {
  const limited = limitedByAddress(ctx, ctx.limits.passkeyStarts)
  return (
    new Elysia({ prefix: '/v1/auth/passkey' })
      .onTransform(({ request }) => {
        if (request.headers.has('origin')) checkOrigin(ctx, request)
      })
      .post('/register/options', async ({ body }) => await signUpOptions(ctx, body), {
        transform: limited,
        body: SignUpOptionsRequest,
        detail: startDoc('startPasskeySignUp', 'Start signing up with a passkey', [409, 429]),
      })
      .post('/register/verify', finishCreation(ctx, signUp), {
        body: RegisterVerifyRequest,
        detail: signInDoc(
          'finishPasskeySignUp',
          'Finish signing up: creates the account and a session',
          [403, 409],
        ),
      })
      // A sign-in link (`hark admin user add` / `user link`) enrols a passkey for its person.
      .post('/link/options', async ({ body }) => await signInLinkOptions(ctx, body.code), {
        transform: limited,
        body: SignInLinkOptionsRequest,
        detail: startDoc(
          'startSignInLink',
          "Start enrolling a passkey with a sign-in link (the operator's)",
          [403, 429],
        ),
      })
      .post('/link/verify', finishCreation(ctx, signInWithLink), {
        body: RegisterVerifyRequest,
        detail: signInDoc(
          'finishSignInLink',
          'Finish a sign-in link: stores the passkey and starts a session',
          [403, 409],
        ),
      })
      .post('/login/options', () => loginOptions(ctx), {
        transform: limited,
        detail: startDoc('startPasskeyLogin', 'Start logging in with a passkey', [429]),
      })
      .post(
        '/login/verify',
        ({ body, request }) => {
          const response = body.response as AuthenticationResponseJSON
          return startSession(request, (userAgent) => logIn(ctx, { ...body, response }, userAgent))
        },
        {
          body: LoginVerifyRequest,
          detail: signInDoc('finishPasskeyLogin', 'Finish logging in: starts a session', [401]),
        },
      )
  )
}

/** The logged-in person's passkeys. */
const management = (ctx: Ctx) =>
  new Elysia({ prefix: '/v1/app/passkeys' })
    .use(personAuth(ctx))
    .get('', async ({ person }) => ({ passkeys: await listPasskeys(ctx, person.user.id) }), {
      detail: doc('listPasskeys', 'passkeys', 'List my passkeys', PasskeysResponse),
    })
    // Adding a passkey needs a browser session: a person token must not become a web login.
    .post(
      '/options',
      async ({ person }) => {
        requireSession(person, 'adding a passkey')
        return await addPasskeyOptions(ctx, person.user)
      },
      {
        detail: doc(
          'startAddingPasskey',
          'passkeys',
          'Start adding a passkey (browser session only)',
          CeremonyOptions,
          { session: true },
        ),
      },
    )
    .post(
      '/verify',
      async ({ person, body }) => {
        requireSession(person, 'adding a passkey')
        return {
          passkey: await addPasskey(ctx, person.user, {
            ...body,
            response: body.response as RegistrationResponseJSON,
          }),
        }
      },
      {
        body: RegisterVerifyRequest,
        detail: doc(
          'finishAddingPasskey',
          'passkeys',
          'Finish adding a passkey (browser session only)',
          PasskeyResponse,
          { session: true, errors: [409] },
        ),
      },
    )
    .patch(
      '/:id',
      async ({ person, params, body }) => ({
        passkey: await renamePasskey(ctx, person.user.id, params.id, body.name),
      }),
      {
        params: PasskeyParams,
        body: RenamePasskeyRequest,
        detail: doc('renamePasskey', 'passkeys', 'Rename a passkey', PasskeyResponse),
      },
    )
    .delete(
      '/:id',
      ({ person, params }) =>
        done(async () => {
          // A leaked token must not take away the person's own ways in.
          requireSession(person, 'removing a passkey')
          await removePasskey(ctx, person.user.id, params.id)
        }),
      {
        params: PasskeyParams,
        detail: doc('removePasskey', 'passkeys', 'Remove a passkey (browser session only)', Ok, {
          session: true,
          errors: [409],
        }),
      },
    )

/** Passkeys: sign-up and login ceremonies (public), and managing one's own (the person). */
export const passkeyRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/passkeys' }).use(ceremonies(ctx)).use(management(ctx))
