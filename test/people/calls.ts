import type { PersonClient } from '../../src/agent/client.ts'
import type { ChannelSummary } from '../../src/messages/channel-list/schema.ts'
import type { PairingStart } from '../../src/people/enrol/pairing.ts'
import type { TestServer } from '../harness.ts'

/**
 * The calls that the split test files of a route share. Each factory takes the file's current
 * server as a function, read at every call: the files start a fresh server per test.
 */

type Person = TestServer['person']

export const MINUTE = 60_000

export interface PollResult {
  status: 'pending' | 'approved' | 'denied' | 'expired'
  token?: string
  channel?: { id: string; label: string }
}

export interface PairingView {
  user_code: string
  label: string | null
  status: string
  created_at: number
  expires_at: number
}

/** Both sides of the device flow (pairing.test.ts, pairing-person.test.ts). */
export function pairingCalls(server: () => TestServer) {
  /** The CLI's side: no token at all. */
  const cli = () => server().raw()
  return {
    cli,
    start: (json?: unknown) => cli().call<PairingStart>('POST', '/v1/pair/start', { json }),
    poll: (deviceCode: unknown, wait?: number, signal?: AbortSignal) =>
      cli().call<PollResult>('POST', '/v1/pair/token', {
        json: { device_code: deviceCode },
        query: { wait },
        signal,
      }),
    /** The person's side: seeing and denying by person token, approving from the app (a session). */
    see: (code: string) =>
      server().person.call<{ pairing: PairingView }>(
        'GET',
        `/v1/app/pairings/${encodeURIComponent(code)}`,
      ),
    approve: async (code: string, json?: unknown, given?: PersonClient) =>
      (given ?? (await server().sessionClient())).call<{
        pairing: PairingView
        channel: { id: string; label: string }
      }>('POST', `/v1/app/pairings/${encodeURIComponent(code)}/approve`, { json }),
    deny: (code: string) =>
      server().person.call<{ pairing: PairingView }>(
        'POST',
        `/v1/app/pairings/${encodeURIComponent(code)}/deny`,
      ),
  }
}

/** A channel's summary as the person's list shows it, and an agent message (channels*.test.ts). */
export function channelCalls(server: () => TestServer) {
  return {
    summary: async (id = server().channelId, person: Person = server().person) =>
      (await person.channels()).channels.find((c) => c.id === id) as ChannelSummary,
    say: (text: string) =>
      server()
        .agent.send({ body: { text } })
        .then((r) => r.message),
  }
}

export interface PersonView {
  id: string
  email: string
  name: string | null
  is_owner: boolean
  created_at: number
}

export interface InviteView {
  id: string
  email: string | null
  created_at: number
  expires_at: number
  used_at: number | null
  link?: string
  code?: string
}

/** People, the registration mode and invites (people.test.ts, invites.test.ts). */
export function peopleCalls(server: () => TestServer) {
  return {
    userId: async (email: string) => (await server().ctx.store.users.byEmail(email))?.id as string,
    people: (person: Person = server().person) =>
      person.call<{ people: PersonView[] }>('GET', '/v1/app/people').then((r) => r.people),
    /** A person in the app (a browser session; the owner by default). */
    app: (email?: string) => server().sessionClient(email),
    /** Registration and invites need a browser session: the owner's, unless `person` is given. */
    setRegistration: async (registration: unknown, person?: Person) =>
      (person ?? (await server().sessionClient())).call<{ registration: string }>(
        'PATCH',
        '/v1/app/settings',
        { json: { registration } },
      ),
    invite: async (json?: unknown, person?: Person) =>
      (person ?? (await server().sessionClient())).call<{ invite: Required<InviteView> }>(
        'POST',
        '/v1/app/invites',
        { json },
      ),
    invites: (person: Person = server().person) =>
      person.call<{ invites: InviteView[] }>('GET', '/v1/app/invites').then((r) => r.invites),
    /** The first step of signing up with a passkey: admission is decided here. */
    signUpOptions: (json: unknown) =>
      server().request('POST', '/v1/auth/passkey/register/options', { json }),
  }
}
