import { expect } from 'bun:test'
import { webFiles } from '../../src/server/webapp/assets.gen.ts'
import { SPA_ROUTES } from '../../src/server/webapp/headers.ts'
import type { Reply, TestServer } from '../harness.ts'

/** The route tables and calls of auth.test.ts and auth-tokens.test.ts. */

export interface Route {
  method: string
  path: string
  json?: unknown
  body?: string
  headers?: Record<string, string>
  /** Person routes only a browser session may use: a person token gets 403. */
  session?: boolean
}

/** Every agent route, with a request that would be valid for it. */
export const AGENT_ROUTES: Route[] = [
  { method: 'GET', path: '/v1/messages' },
  { method: 'POST', path: '/v1/messages', json: { body: { text: 'hi' } } },
  { method: 'PATCH', path: '/v1/messages/msg_x', json: { text: 'x' } },
  { method: 'PUT', path: '/v1/messages/msg_x', json: { body: { text: 'x' } } },
  { method: 'DELETE', path: '/v1/messages/msg_x' },
  { method: 'POST', path: '/v1/messages/msg_x/state', json: { state: 'seen' } },
  { method: 'POST', path: '/v1/messages/msg_x/cancel' },
  { method: 'GET', path: '/v1/asks' },
  { method: 'GET', path: '/v1/asks/msg_x' },
  { method: 'GET', path: '/v1/pins' },
  { method: 'PUT', path: '/v1/pins/k', json: { body: { text: 'x' } } },
  { method: 'PATCH', path: '/v1/pins/k', json: { text: 'x' } },
  { method: 'DELETE', path: '/v1/pins/k' },
  {
    method: 'POST',
    path: '/v1/files?name=a.txt',
    body: 'abc',
    headers: { 'content-type': 'text/plain' },
  },
  { method: 'GET', path: '/v1/files/file_x' },
  { method: 'GET', path: '/v1/channel' },
  { method: 'PATCH', path: '/v1/agent', json: { label: 'x' } },
  { method: 'POST', path: '/v1/secrets', json: { name: 'X', public_key: 'x' } },
  { method: 'GET', path: '/v1/secrets/sec_x' },
  { method: 'DELETE', path: '/v1/secrets/sec_x' },
  { method: 'GET', path: '/v1/policies' },
  { method: 'POST', path: '/v1/policies/pol_x/uses', json: { summary: 'x' } },
]

/** A well-formed proof and policy claims: the session is checked once the body is valid. */
const PROOF = {
  credential_id: 'x',
  authenticator_data: 'x',
  client_data_json: 'x',
  signature: 'x',
  answered_at: 1,
}
const POLICY = {
  claim: {
    type: 'hark.policy',
    id: 'pol_xxxxxxxx',
    rule: { effect: 'allow', tool: 'Bash', match: { kind: 'tool' }, where: { kind: 'all' } },
    created_at: 1,
    expires_at: 2,
  },
  proof: PROOF,
}
const REVOCATION = {
  claim: { type: 'hark.policy.revoke', policy_id: 'pol_x', revoked_at: 1 },
  proof: PROOF,
}

/** Every route of the person's side. */
export const PERSON_ROUTES: Route[] = [
  { method: 'GET', path: '/v1/app/channels' },
  { method: 'GET', path: '/v1/app/policies' },
  { method: 'POST', path: '/v1/app/policies', json: POLICY, session: true },
  { method: 'POST', path: '/v1/app/policies/pol_x/revoke', json: REVOCATION, session: true },
  { method: 'GET', path: '/v1/app/secrets/sec_x' },
  { method: 'POST', path: '/v1/app/secrets/sec_x/fulfil', json: { ciphertext: 'x' } },
  { method: 'GET', path: '/v1/app/feed' },
  { method: 'GET', path: '/v1/app/channels/ch_x/messages' },
  { method: 'POST', path: '/v1/app/channels/ch_x/messages', json: { body: { text: 'hi' } } },
  { method: 'POST', path: '/v1/app/messages/msg_x/answer', json: { answer: true } },
  {
    method: 'POST',
    path: '/v1/app/answers',
    json: {
      items: [
        { id: 'msg_x', answer: true },
        { id: 'msg_y', answer: true },
      ],
      proof: PROOF,
    },
    session: true,
  },
  { method: 'GET', path: '/v1/app/asks' },
  { method: 'GET', path: '/v1/app/channels/ch_x/approvals' },
  { method: 'GET', path: '/v1/app/channels/ch_x' },
  { method: 'PATCH', path: '/v1/app/channels/ch_x', json: { label: 'x' } },
  { method: 'DELETE', path: '/v1/app/channels/ch_x' },
  { method: 'POST', path: '/v1/app/channels/ch_x/read' },
  { method: 'GET', path: '/v1/app/channels/ch_x/pins' },
  { method: 'GET', path: '/v1/app/search?q=x' },
  {
    method: 'POST',
    path: '/v1/app/channels/ch_x/files?name=a.txt',
    body: 'hello',
    headers: { 'content-type': 'text/plain' },
  },
  { method: 'GET', path: '/v1/app/channels/ch_x/files/file_x' },
  { method: 'GET', path: '/v1/app/me' },
  { method: 'GET', path: '/v1/app/people' },
  { method: 'DELETE', path: '/v1/app/people/usr_x', session: true },
  { method: 'GET', path: '/v1/app/settings' },
  { method: 'PATCH', path: '/v1/app/settings', json: { registration: 'open' }, session: true },
  { method: 'GET', path: '/v1/app/invites' },
  { method: 'POST', path: '/v1/app/invites', json: {}, session: true },
  { method: 'DELETE', path: '/v1/app/invites/inv_x' },
  { method: 'GET', path: '/v1/app/sessions' },
  { method: 'DELETE', path: '/v1/app/sessions/ses_x' },
  { method: 'POST', path: '/v1/app/logout' },
  { method: 'POST', path: '/v1/app/logout-all' },
  { method: 'GET', path: '/v1/app/tokens' },
  { method: 'POST', path: '/v1/app/tokens', json: { label: 'x' }, session: true },
  { method: 'DELETE', path: '/v1/app/tokens/tok_x' },
  { method: 'POST', path: '/v1/app/tokens/tok_x/rotate', session: true },
  { method: 'GET', path: '/v1/app/pairings' },
  { method: 'GET', path: '/v1/app/pairings/code_x' },
  { method: 'POST', path: '/v1/app/pairings/code_x/approve', json: {}, session: true },
  { method: 'POST', path: '/v1/app/pairings/code_x/deny' },
  { method: 'POST', path: '/v1/app/join-links', json: {}, session: true },
  { method: 'GET', path: '/v1/app/passkeys' },
  { method: 'POST', path: '/v1/app/passkeys/options', session: true },
  {
    method: 'POST',
    path: '/v1/app/passkeys/verify',
    // A well-formed credential: the session is checked once the body is valid.
    json: {
      challenge_id: 'x',
      response: {
        id: 'x',
        rawId: 'x',
        type: 'public-key',
        response: { clientDataJSON: 'x', attestationObject: 'x' },
      },
    },
    session: true,
  },
  { method: 'PATCH', path: '/v1/app/passkeys/cred_x', json: { name: 'x' } },
  { method: 'DELETE', path: '/v1/app/passkeys/cred_x', session: true },
  { method: 'GET', path: '/v1/app/push/subscriptions' },
  {
    method: 'POST',
    path: '/v1/app/push/subscriptions',
    json: { endpoint: 'https://push.example.com/x', keys: { p256dh: 'x', auth: 'x' } },
    session: true,
  },
  { method: 'DELETE', path: '/v1/app/push/subscriptions/push_x' },
  { method: 'POST', path: '/v1/app/push/subscriptions/push_x/test' },
  { method: 'POST', path: '/v1/app/push/test', json: {} },
  { method: 'GET', path: '/v1/app/push/email-reminders' },
  { method: 'PATCH', path: '/v1/app/push/email-reminders', json: { minutes: 5 } },
]

/**
 * Routes anyone may call, without a token or session: health, server info and the API document;
 * the web app's files and screens (the build's own lists); and the flows that take no token by
 * design: login and sign-up, pairing, join links, and answering from a notification (with its
 * capability).
 */
export const PUBLIC_ROUTES: Route[] = [
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/v1/info' },
  { method: 'GET', path: '/v1/openapi.json' },
  {
    method: 'POST',
    path: '/v1/auth/email/start',
    json: { email: 'nobody@example.com', purpose: 'login' },
  },
  {
    method: 'POST',
    path: '/v1/auth/email/verify',
    json: { email: 'nobody@example.com', code: '00000000' },
  },
  { method: 'POST', path: '/v1/auth/passkey/register/options', json: { email: 'a@example.com' } },
  {
    method: 'POST',
    path: '/v1/auth/passkey/register/verify',
    json: { challenge_id: 'x', response: {} },
  },
  { method: 'POST', path: '/v1/auth/passkey/link/options', json: { code: 'x' } },
  {
    method: 'POST',
    path: '/v1/auth/passkey/link/verify',
    json: { challenge_id: 'x', response: {} },
  },
  { method: 'POST', path: '/v1/auth/passkey/login/options', json: {} },
  {
    method: 'POST',
    path: '/v1/auth/passkey/login/verify',
    json: { challenge_id: 'x', response: {} },
  },
  { method: 'POST', path: '/v1/pair/start', json: { label: 'x' } },
  { method: 'POST', path: '/v1/pair/token', json: { device_code: 'x' } },
  { method: 'POST', path: '/v1/join', json: { code: 'x' } },
  { method: 'POST', path: '/v1/push/answer', json: { capability: 'x', answer: true } },
  ...Object.keys(webFiles).map((path) => ({ method: 'GET', path })),
  ...SPA_ROUTES.map((path) => ({ method: 'GET', path: path.replace('*', 'ch_x') })),
]

/**
 * Sends a route's request with the given Authorization header (or none), and no Origin, to the
 * file's current server (read at every call: the files start a fresh server per test).
 */
export const caller =
  (server: () => TestServer) =>
  (route: Route, authorization?: string): Promise<Reply> => {
    const headers: Record<string, string> = { ...route.headers }
    if (authorization !== undefined) headers.authorization = authorization
    return server().request(route.method, route.path, {
      json: route.json,
      body: route.body,
      headers,
      origin: null,
    })
  }

/** Expects `status` with a JSON `{ error: string }` body. */
export async function expectError(res: Reply, status: number, what: string): Promise<string> {
  if (res.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.text}`)
  }
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(typeof res.body?.error).toBe('string')
  return res.body.error as string
}

export const label = (r: Route) => `${r.method} ${r.path}`
