import { fail } from '../core/errors.ts'
import type { UserRow } from './rows.ts'
import type { SessionRow } from './sessions/store.ts'
import type { TokenRow } from './tokens/store.ts'

/** The person behind a request: by a person token (scripts) or a session cookie (the app). */
export interface PersonAuth {
  user: UserRow
  token?: TokenRow
  session?: SessionRow
}

/**
 * For what would turn a token into a lasting way in (adding a passkey) or mint new secrets
 * (making or rotating tokens): only a browser session may, so a leaked person token cannot
 * entrench itself. Revoking stays open to tokens.
 */
export function requireSession(person: PersonAuth, what: string): void {
  if (!person.session) {
    throw fail.forbidden(
      `${what} needs a browser session: log in to the app; a person token cannot do this`,
    )
  }
}
