import type { SQL } from 'bun'
import { pgIdempotencyStore } from '../../access/idempotency/pg-store.ts'
import { pgServerKeyStore } from '../../access/keys/pg-store.ts'
import { pgChallengeStore, pgPasskeyStore } from '../../access/passkeys/pg-store.ts'
import { pgSessionStore } from '../../access/sessions/pg-store.ts'
import { pgTokenStore } from '../../access/tokens/pg-store.ts'
import { pgChannelStore } from '../../channels/pg-store.ts'
import type { AsyncStores } from '../../core/context.ts'
import { pgFileStore } from '../../files/pg-store.ts'
import { pgAuditStore } from '../../messages/asks/audit/pg-store.ts'
import { pgPolicyStore } from '../../messages/asks/policies/pg-store.ts'
import { pgSecretStore } from '../../messages/asks/secrets/pg-store.ts'
import { pgMessageStore } from '../../messages/pg-store.ts'
import { pgSearchStore } from '../../messages/search/pg-store.ts'
import { pgEmailCodeStore } from '../../people/enrol/email/pg-store.ts'
import { pgJoinLinkStore, pgPairingStore, pgSignInLinkStore } from '../../people/enrol/pg-store.ts'
import { pgSettingsStore } from '../../people/pg-settings-store.ts'
import { pgInviteStore, pgUserStore } from '../../people/pg-store.ts'
import { type PgStoreOptions, pgPushStore } from '../../push/pg-store.ts'

/** Every store's Postgres twin, by the name `ctx.store` gives it on SQLite (the one interface). */
export type PgStores = AsyncStores

/**
 * The twin of `openStores` (server/context.ts) over `sql` (a transaction for writes). Typed as
 * `PgStores`, so a store added on SQLite without its twin here does not compile. `transaction`:
 * `sql` is one transaction (`openPgTransaction`), where a store may keep an answer for the
 * transaction's length (push's `anyByUser`); never the pool's stores, which live for ever.
 */
export function openPgStores(sql: SQL, options: PgStoreOptions = {}): PgStores {
  return {
    messages: pgMessageStore(sql),
    channels: pgChannelStore(sql),
    users: pgUserStore(sql),
    tokens: pgTokenStore(sql),
    files: pgFileStore(sql),
    sessions: pgSessionStore(sql),
    settings: pgSettingsStore(sql),
    invites: pgInviteStore(sql),
    emailCodes: pgEmailCodeStore(sql),
    passkeys: pgPasskeyStore(sql),
    challenges: pgChallengeStore(sql),
    pairings: pgPairingStore(sql),
    joinLinks: pgJoinLinkStore(sql),
    signInLinks: pgSignInLinkStore(sql),
    push: pgPushStore(sql, options),
    secrets: pgSecretStore(sql),
    audit: pgAuditStore(sql),
    idempotency: pgIdempotencyStore(sql),
    search: pgSearchStore(sql),
    serverKeys: pgServerKeyStore(sql),
    policies: pgPolicyStore(sql),
  }
}

/** The stores of a unit's (or a batch's) transaction: what the write path opens over it. */
export const openPgTransaction = (sql: SQL): PgStores => openPgStores(sql, { transaction: true })
