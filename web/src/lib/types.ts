/**
 * The records the app reads, taken from the server's own schemas (type-only imports: nothing
 * of the server ends up in the bundle), so a change on one side breaks the build on the other.
 */

export type { Passkey } from '../../../src/access/passkeys/schema.ts'
export type { ChannelSummary } from '../../../src/channels/schema.ts'
export type {
  AskInfo,
  Block,
  DeletedMessage,
  FeedResponse,
  Message,
  MessageBody,
} from '../../../src/messages/schema.ts'

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

export interface Me {
  id: string
  email: string
  name: string | null
  is_owner: boolean
}

export interface FileInfo {
  file_id: string
  name: string
  mime: string
  size: number
}
