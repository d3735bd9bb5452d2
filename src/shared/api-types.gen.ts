/**
 * The wire records the web app reads, printed from the server's TypeBox schemas by
 * scripts/api-types.ts (run `bun scripts/api-doc.ts`); do not edit by hand:
 * test/api/api-types.test.ts fails when this differs from what the schemas print now.
 * Plain types, no import: src/shared/ imports nothing of the server.
 */

export type AckState = 'seen' | 'working' | 'done'

export interface AskInfo {
  status: 'open' | 'answered' | 'expired' | 'cancelled'
  expires_at?: number
  answered_at?: number
  answer?: unknown
  /** approvals: SHA-256 (hex) of the canonical JSON of { tool, input } */
  request_hash?: string
  /** why a cancelled question was withdrawn */
  reason?: string
  proof?: StoredProof
}

/** A block; see the spec for the known types */
export interface Block {
  type: string
  id?: string
  [key: string]: unknown
}

export interface ChannelSummary {
  id: string
  /** the agent's name as the person sees it */
  label: string
  created_at: number
  updated_at: number
  /** questions waiting for the person */
  open_asks: number
  pins: number
  /** devices of the person a push from this channel reaches */
  push_devices: number
  /** agent messages since the person's last read (max 1000) */
  unread: number
  last_message: Message | null
}

export interface DeletedMessage {
  id: string
  deleted: true
}

export interface FeedResponse {
  messages: (Message | DeletedMessage)[]
  cursor: number
  has_more: boolean
}

export interface FileInfo {
  file_id: string
  name: string
  mime: string
  /** bytes */
  size: number
  created_at: number
}

export interface Message {
  id: string
  channel_id: string
  sender: 'agent' | 'human'
  created_at: number
  updated_at: number
  body: MessageBody
  silent?: boolean
  ask?: AskInfo
  state?: AckState | null
  /** the pin key, on pinned messages */
  pin?: string
}

export interface MessageBody {
  title?: string
  text?: string
  blocks?: Block[]
}

export interface Passkey {
  /** the credential id, base64url */
  id: string
  name: string
  created_at: number
  last_used_at: number | null
  /** singleDevice or multiDevice */
  device_type: string | null
  /** synced by a passkey provider (iCloud, Google...) */
  backed_up: boolean
  /**
   * what `hark keys` shows for this passkey (8 groups of 4 hex); null for a key kind agents cannot
   * check
   */
  fingerprint: string | null
}

export interface PushDevice {
  id: string
  name: string | null
  /** from the User-Agent it subscribed with */
  browser: string
  created_at: number
  last_success_at: number | null
}

export interface SearchResponse {
  /** best match first */
  results: SearchResult[]
  /** pass as `cursor` for the next page; null when there is no more */
  cursor: string | null
}

export interface SearchResult {
  /** the message; the app opens /c/CHANNEL#MESSAGE */
  message_id: string
  channel_id: string
  channel_label: string
  sender: 'agent' | 'human'
  created_at: number
  /** the matched text in context, in parts; render `match` parts highlighted */
  snippet: SnippetPart[]
}

export interface SecretRequest {
  id: string
  channel_id: string
  /** the thread message that shows the request */
  message_id: string
  name: string
  description?: string
  public_key: string
  /** first 8 bytes of SHA-256 of the raw public key, hex */
  fingerprint: string
  status: SecretStatus
  created_at: number
  updated_at: number
}

export type SecretStatus = 'pending' | 'fulfilled' | 'delivered' | 'cancelled'

export interface SignedInUser {
  user: {
    id: string
    email: string
    name: string | null
    is_owner: boolean
  }
}

export interface SnippetPart {
  text: string
  match: boolean
}

export interface StoredProof {
  credential_id: string
  authenticator_data: string
  client_data_json: string
  signature: string
  user_handle?: string
  /** the app's clock when signed, ms */
  answered_at: number
  batch?: {
    /**
     * answered with one gesture for several questions: the SHA-256 (hex) of each claim, in the
     * signed order (docs/security.md "Batch answers")
     */
    items: string[]
  }
}
