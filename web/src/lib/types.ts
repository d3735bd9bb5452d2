/**
 * The records the app reads. Those the server has a schema for come from it, printed as plain
 * types into src/shared/api-types.gen.ts (scripts/api-types.ts; a test fails when they differ
 * from the schemas); the rest are the shapes its routes answer with, written out here.
 */
import type { SecretRequest, SignedInUser } from '../../../src/shared/api-types.gen.ts'

export type {
  AskInfo,
  Block,
  ChannelSummary,
  DeletedMessage,
  FeedResponse,
  FileInfo,
  Message,
  MessageBody,
  Passkey,
  PushDevice,
  SearchResponse,
  SearchResult,
} from '../../../src/shared/api-types.gen.ts'

/** Who is logged in, as a login, a sign-up or `/v1/app/me` answers it. */
export type Me = SignedInUser['user']

/** A `secret_request` block's record: the public key its secret is sealed to, and its status. */
export type SecretRecord = SecretRequest

export interface Info {
  name: string
  version: string
  /** The server's public URL (its --base-url): what agents connect to. */
  base_url: string
  /** The server's VAPID public key (base64url), for push subscriptions. */
  vapid_public_key?: string
  needs_setup: boolean
  registration: RegistrationMode
  features: { files: boolean; push: boolean; passkeys: boolean; email: boolean }
}

export type RegistrationMode = 'closed' | 'invite' | 'open'

/** Someone on this server, as the owner's people list shows them. */
export interface Person {
  id: string
  email: string
  name: string | null
  is_owner: boolean
  created_at: number
}

export interface Invite {
  id: string
  email: string | null
  created_at: number
  expires_at: number
}

export interface TokenInfo {
  id: string
  kind: 'agent' | 'person'
  label: string | null
  channel_id: string | null
  created_at: number
  last_used_at: number | null
}

export interface SessionInfo {
  id: string
  user_agent: string | null
  created_at: number
  last_seen_at: number
  current: boolean
}

/** A `hark init` waiting for approval, looked up by the code its terminal shows. */
export interface Pairing {
  user_code: string
  label: string | null
  /** The host name the machine sent (a claim), and the address the server saw it from. */
  host: string | null
  address: string | null
  created_at: number
  expires_at: number
}

/** The pairings waiting for the owner's answer; `version` names this list for the next wait. */
export interface PendingPairings {
  pairings: Pairing[]
  version: string
}

/** The channel an approved pairing made. */
export interface PairedChannel {
  id: string
  label: string
}

/**
 * One decision of a channel's approval history (`GET /v1/app/channels/:id/approvals`), as the
 * audit log holds it (src/messages/asks/audit/service.ts, `AuditEntry`), newest first by `seq`.
 */
export interface ApprovalRecord {
  seq: number
  hash: string
  at: number
  channel_id: string
  message_id: string
  request_hash: string
  tool?: string
  /** What the action does, in a line (when the server includes it). */
  summary?: string
  /** `deleted`: the agent deleted the message; `was` says what it was then. */
  status: 'answered' | 'expired' | 'cancelled' | 'deleted'
  was?: 'open' | 'answered' | 'expired' | 'cancelled'
  /** The title the person was shown, as sent. */
  title?: string
  answer?: unknown
  /** Who settled it: the person (signed by a passkey, or unsigned), the agent, or expiry. */
  by: 'passkey' | 'session' | 'person-token' | 'notification' | 'agent' | 'server'
  credential_id?: string
  /** The browser's user agent, or the token's label. */
  device?: string
  reason?: string
  /** Set when one passkey gesture allowed several approvals: the list's item hashes. */
  proof?: { batch?: { items: string[] } }
}
