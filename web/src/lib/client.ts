import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/browser'
import type { AnswerProof } from '../../../src/shared/proof.ts'
import { api } from './api.ts'
import type {
  ApprovalRecord,
  ChannelSummary,
  FeedResponse,
  FileInfo,
  Info,
  Invite,
  Me,
  Message,
  MessageBody,
  PairedChannel,
  Pairing,
  Passkey,
  PendingPairings,
  Person,
  PushDevice,
  RegistrationMode,
  SearchResponse,
  SecretRecord,
  SessionInfo,
  TokenInfo,
} from './types.ts'

/**
 * The person's client: one function per call the app makes, typed with the records it answers.
 * Every path of the API lives here and nowhere else in the app (the service worker, which runs
 * apart, has its one call of its own), so a route that moves is changed in one place.
 */

/** Paths under this prefix are the server's API, never one of the app's screens. */
export const API_PREFIX = '/v1/'

const APP = '/v1/app'
const enc = encodeURIComponent
const channelPath = (id: string) => `${APP}/channels/${enc(id)}`

const get = <T>(path: string, signal?: AbortSignal) => api<T>('GET', path, undefined, { signal })
const post = <T>(path: string, json: unknown = {}) => api<T>('POST', path, json)
const patch = <T>(path: string, json: unknown) => api<T>('PATCH', path, json)
const del = <T>(path: string) => api<T>('DELETE', path)
/** For calls whose answer says no more than that they worked. */
const done = async (call: Promise<unknown>): Promise<void> => {
  await call
}

// The server and who is logged in.

export const serverInfo = () => get<Info>('/v1/info')
export const me = () => get<{ user: Me }>(`${APP}/me`).then((r) => r.user)
export const logOut = (everywhere: boolean) =>
  done(post(everywhere ? `${APP}/logout-all` : `${APP}/logout`))
export const setRegistration = (registration: RegistrationMode) =>
  done(patch(`${APP}/settings`, { registration }))

/** Creating an account: the email, a name if given, and the admission (setup token or invite). */
export interface SignUpRequest {
  email: string
  name?: string
  setup_token?: string
  invite?: string
}

// Emailed codes: ask for one, then trade it for a session.

/** Logging in needs only the email; a sign-up carries the rest of its request too. */
export interface EmailCodeRequest extends SignUpRequest {
  purpose: 'login' | 'signup'
}

export const startEmailCode = (request: EmailCodeRequest) =>
  done(post('/v1/auth/email/start', request))
export const verifyEmailCode = (
  request: Pick<EmailCodeRequest, 'email' | 'purpose'> & { code: string },
) => post<{ user: Me }>('/v1/auth/email/verify', request).then((r) => r.user)

// Passkeys: each ceremony is options from the server, the browser's prompt, then a verify.

export interface Ceremony<O> {
  challenge_id: string
  options: O
}

type CreationCeremony = Ceremony<PublicKeyCredentialCreationOptionsJSON>

export const passkeyLoginOptions = () =>
  post<Ceremony<PublicKeyCredentialRequestOptionsJSON>>('/v1/auth/passkey/login/options')
export const passkeyLogin = (challenge_id: string, response: AuthenticationResponseJSON) =>
  post<{ user: Me }>('/v1/auth/passkey/login/verify', { challenge_id, response }).then(
    (r) => r.user,
  )
export const passkeySignUpOptions = (request: SignUpRequest) =>
  post<CreationCeremony>('/v1/auth/passkey/register/options', request)
/** Finishes a ceremony that creates a passkey and signs in with it: the server answers who. */
const finishCreation =
  (path: string) => (challenge_id: string, response: RegistrationResponseJSON, name: string) =>
    post<{ user: Me }>(path, { challenge_id, response, name }).then((r) => r.user)
export const passkeySignUp = finishCreation('/v1/auth/passkey/register/verify')
/** A sign-in link (`/enrol#CODE`, from `hark admin user add` or `user link`). */
export const signInLinkOptions = (code: string) =>
  post<CreationCeremony>('/v1/auth/passkey/link/options', { code })
export const signInWithLink = finishCreation('/v1/auth/passkey/link/verify')
export const newPasskeyOptions = () => post<CreationCeremony>(`${APP}/passkeys/options`)
export const newPasskey = (
  challenge_id: string,
  response: RegistrationResponseJSON,
  name: string,
) =>
  post<{ passkey: Passkey }>(`${APP}/passkeys/verify`, { challenge_id, response, name }).then(
    (r) => r.passkey,
  )
export const passkeys = () =>
  get<{ passkeys: Passkey[] }>(`${APP}/passkeys`).then((r) => r.passkeys)
export const renamePasskey = (id: string, name: string) =>
  done(patch(`${APP}/passkeys/${enc(id)}`, { name }))
export const removePasskey = (id: string) => done(del(`${APP}/passkeys/${enc(id)}`))

// Channels and their messages.

/** The list, with the person-wide feed's cursor it is current to. */
export const channels = () => get<{ channels: ChannelSummary[]; cursor: number }>(`${APP}/channels`)
export const renameChannel = (id: string, label: string) =>
  patch<{ channel: ChannelSummary }>(channelPath(id), { label }).then((r) => r.channel)
export const deleteChannel = (id: string) => done(del(channelPath(id)))
export const markChannelRead = (id: string) =>
  post<{ channel: ChannelSummary }>(`${channelPath(id)}/read`).then((r) => r.channel)

/** Every channel's changes after `since`, held open up to `wait` seconds while there are none. */
export const personFeed = (since: number, wait: number, signal?: AbortSignal) =>
  get<FeedResponse>(`${APP}/feed?since=${since}&wait=${wait}`, signal)

/** A channel's newest `count` messages, or the `count` before the message `before`. */
export const latestMessages = (
  channelId: string,
  count: number,
  { before, signal }: { before?: string; signal?: AbortSignal } = {},
) =>
  get<FeedResponse>(
    `${channelPath(channelId)}/messages?tail=${count}${before ? `&before=${enc(before)}` : ''}`,
    signal,
  )

/** One channel's changes after `since`, held open up to `wait` seconds while there are none. */
export const channelFeed = (channelId: string, since: number, wait: number, signal?: AbortSignal) =>
  get<FeedResponse>(`${channelPath(channelId)}/messages?since=${since}&wait=${wait}`, signal)

export const pinnedMessages = (channelId: string, signal?: AbortSignal) =>
  get<{ pins: { message: Message }[] }>(`${channelPath(channelId)}/pins`, signal).then((r) =>
    r.pins.map((p) => p.message),
  )

/** `key`: the Idempotency-Key made once for this message, so a retry never posts it twice. */
export const sendMessage = (channelId: string, body: MessageBody, key?: string) =>
  api<{ message: Message }>(
    'POST',
    `${channelPath(channelId)}/messages`,
    { body },
    {
      headers: key ? { 'idempotency-key': key } : undefined,
    },
  ).then((r) => r.message)

/**
 * Answers a question, with the passkey's proof when it was signed (lib/signing.ts); a 409
 * means it was closed already (answered, cancelled, expired).
 */
export const answer = (messageId: string, answer: unknown, proof?: AnswerProof) =>
  post<{ message: Message }>(
    `${APP}/messages/${enc(messageId)}/answer`,
    proof ? { answer, proof } : { answer },
  ).then((r) => r.message)

/**
 * Answers several questions with one passkey assertion over the list of their claims
 * (lib/batch.ts): all of them, or none (an error names the item at fault).
 */
export const answerBatch = (items: { id: string; answer: unknown }[], proof: AnswerProof) =>
  post<{ answers: { message: Message; answer: unknown }[] }>(`${APP}/answers`, {
    items,
    proof,
  }).then((r) => r.answers.map((a) => a.message))

/** A channel's approval decisions, newest first; `before`: the `seq` of the last one shown. */
export const approvalHistory = (channelId: string, before?: number, limit = 30) =>
  get<{ approvals: ApprovalRecord[] }>(
    `${channelPath(channelId)}/approvals?limit=${limit}${before ? `&before=${before}` : ''}`,
  ).then((r) => r.approvals)

/** The person's open questions across every channel, oldest first (`approval`: only those). */
export const openAsks = (type?: 'approval') =>
  get<{ asks: Message[] }>(`${APP}/asks${type ? `?type=${type}` : ''}`).then((r) => r.asks)

/** The person's messages matching `q`, best first; `cursor`: the previous page's, for the next. */
export const searchMessages = (q: string, cursor?: string | null, signal?: AbortSignal) =>
  get<SearchResponse>(`${APP}/search?q=${enc(q)}${cursor ? `&cursor=${enc(cursor)}` : ''}`, signal)

/** `key`: an Idempotency-Key of this file's own, so a retried upload is stored once. */
export const uploadFile = (channelId: string, file: File, key?: string) =>
  api<FileInfo>('POST', `${channelPath(channelId)}/files?name=${enc(file.name)}`, undefined, {
    raw: file,
    contentType: file.type,
    headers: key ? { 'idempotency-key': key } : undefined,
  })

/** Where a file of a channel downloads from (the session cookie rides along). */
export const fileUrl = (channelId: string, fileId: string) =>
  `${channelPath(channelId)}/files/${enc(fileId)}`

export const secretRequest = (id: string) =>
  get<{ secret_request: SecretRecord }>(`${APP}/secrets/${enc(id)}`).then((r) => r.secret_request)
/** `proof`: the person's passkey over the ciphertext (signing.ts signSecret). */
export const fulfilSecret = (id: string, ciphertext: string, proof?: AnswerProof) =>
  post<{ secret_request: SecretRecord }>(`${APP}/secrets/${enc(id)}/fulfil`, {
    ciphertext,
    ...(proof ? { proof } : {}),
  }).then((r) => r.secret_request)

// Connecting agents: approving a `hark init`, or a join link for `hark join`.

/** The pending pairings (the owner's); held up to `wait` s while the list is still `version`. */
export const pendingPairings = (version: string | undefined, wait: number, signal?: AbortSignal) =>
  get<PendingPairings>(
    `${APP}/pairings?wait=${wait}${version ? `&version=${enc(version)}` : ''}`,
    signal,
  )
export const pairing = (code: string) =>
  get<{ pairing: Pairing }>(`${APP}/pairings/${enc(code)}`).then((r) => r.pairing)
/** Approves with the name the person gave; none keeps the name the agent asked for. */
export const approvePairing = (code: string, label?: string) =>
  post<{ channel: PairedChannel }>(
    `${APP}/pairings/${enc(code)}/approve`,
    label ? { label } : {},
  ).then((r) => r.channel)
export const denyPairing = (code: string) => done(post(`${APP}/pairings/${enc(code)}/deny`))

/** A join link for a new channel (named `label`), or a new token for the channel `channel_id`. */
export const createJoinLink = (request: { label?: string } | { channel_id: string }) =>
  post<{ join_link: { link: string } }>(`${APP}/join-links`, request).then((r) => r.join_link.link)

// Tokens, sessions, notifications.

export const tokens = () => get<{ tokens: TokenInfo[] }>(`${APP}/tokens`).then((r) => r.tokens)
export const revokeToken = (id: string) => done(del(`${APP}/tokens/${enc(id)}`))
/** A new secret for the same token; answers it (shown once). */
export const rotateToken = (id: string) =>
  post<{ token: string }>(`${APP}/tokens/${enc(id)}/rotate`).then((r) => r.token)
export const createPersonToken = (label?: string) =>
  post<{ token: string }>(`${APP}/tokens`, label ? { label } : {}).then((r) => r.token)

export const sessions = () =>
  get<{ sessions: SessionInfo[] }>(`${APP}/sessions`).then((r) => r.sessions)
export const endSession = (id: string) => done(del(`${APP}/sessions/${enc(id)}`))

export const pushDevices = () =>
  get<{ subscriptions: PushDevice[] }>(`${APP}/push/subscriptions`).then((r) => r.subscriptions)
export const addPushDevice = (subscription: PushSubscriptionJSON, name: string) =>
  done(post(`${APP}/push/subscriptions`, { ...subscription, name }))
export const removePushDevice = (id: string) => done(del(`${APP}/push/subscriptions/${enc(id)}`))
export const testPushDevice = (id: string) =>
  done(post(`${APP}/push/subscriptions/${enc(id)}/test`))
/** A test notification to every device of mine; tapped, it opens `opens`. How many it went to. */
export const sendTestNotification = (opens: 'settings' | 'setup') =>
  post<{ sent: number }>(`${APP}/push/test`, { opens }).then((r) => r.sent)
/** After how many minutes an open question is emailed; null: never. */
export const emailReminderMinutes = () =>
  get<{ minutes: number | null }>(`${APP}/push/email-reminders`).then((r) => r.minutes)
export const setEmailReminderMinutes = (minutes: number | null) =>
  done(patch(`${APP}/push/email-reminders`, { minutes }))

// The server's people and invites (the owner's; invites also for anyone when invite-only).

export const people = () => get<{ people: Person[] }>(`${APP}/people`).then((r) => r.people)
export const removePerson = (id: string) => done(del(`${APP}/people/${enc(id)}`))
export const invites = () => get<{ invites: Invite[] }>(`${APP}/invites`).then((r) => r.invites)
/** An invite link, for `email` only or (without) for anyone who has it. */
export const createInvite = (email?: string) =>
  post<{ invite: { link: string } }>(`${APP}/invites`, email ? { email } : {}).then(
    (r) => r.invite.link,
  )
export const revokeInvite = (id: string) => done(del(`${APP}/invites/${enc(id)}`))
