import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { Info, Me } from './types.ts'

/** What every screen may need: the server's public info and who is logged in. */
export interface Session {
  info: Info
  me: Me | null
  signedIn(me: Me): void
  signedOut(): void
  refreshInfo(): Promise<void>
}

export const SessionContext = createContext<Session | null>(null)

export function useSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside the app')
  return session
}
