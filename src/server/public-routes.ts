import { Elysia, t } from 'elysia'
import type { Ctx } from '../core/context.ts'
import { doc } from '../core/docs.ts'
import { fail } from '../core/errors.ts'
import { VERSION } from '../core/version.ts'
import { registrationMode } from '../people/settings.ts'
import { webRoutes } from './webapp/routes.ts'

export const Info = t.Object(
  {
    name: t.String(),
    version: t.String(),
    base_url: t.String({ description: 'the public URL of this server (links, passkeys)' }),
    needs_setup: t.Boolean({ description: 'true until the server has an owner' }),
    registration: t.Union([t.Literal('closed'), t.Literal('invite'), t.Literal('open')]),
    features: t.Object({
      files: t.Boolean(),
      push: t.Boolean(),
      passkeys: t.Boolean(),
      email: t.Boolean(),
    }),
    vapid_public_key: t.String({ description: 'applicationServerKey for web push subscriptions' }),
  },
  { $id: 'Info' },
)

/** What anyone may read: health, server info, and the web app's shell. */
export const publicRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/public' })
    // Up, and taking writes: once a flush to disk failed, every write is refused until a
    // restart, and a health check (systemd, a proxy, an uptime monitor) must see it.
    .get(
      '/health',
      () => {
        const failure = ctx.writes.failure()
        if (failure) {
          throw fail.unavailable(
            'the database could not be flushed to disk; writes are refused until hark is restarted',
          )
        }
        return { ok: true as const }
      },
      {
        detail: doc(
          'health',
          'public',
          'Is the server up, and taking writes?',
          t.Object({ ok: t.Literal(true) }),
          { public: true, errors: [503] },
        ),
      },
    )
    .get(
      '/v1/info',
      async () => ({
        name: 'Hark',
        version: VERSION,
        base_url: ctx.config.baseUrl,
        needs_setup: !(await ctx.store.users.hasOwner()),
        registration: await registrationMode(ctx),
        features: { files: true, push: true, passkeys: true, email: ctx.mailer !== undefined },
        vapid_public_key: ctx.push.vapid.current().publicKey,
      }),
      { detail: doc('getInfo', 'public', 'Public server info', Info, { public: true }) },
    )
    // The answering web app: its shell, bundle, icons, service worker and html-block host.
    .use(webRoutes())
