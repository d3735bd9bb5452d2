/**
 * The wire records the web app reads, taken from the server's own schemas so that a change on
 * one side breaks the build of the other. Type-only: every line here is erased, so nothing of
 * the server reaches the app's bundle. The app imports these through src/shared/ only (the
 * linter enforces it: see biome.json), and this file is where it crosses over.
 */
import type { Static } from '@sinclair/typebox'
import type { SecretRequest } from '../messages/asks/secrets/schema.ts'
import type { SignedInUser } from '../people/schema.ts'

export type { Passkey } from '../access/passkeys/schema.ts'
export type { FileInfo } from '../files/schema.ts'
export type { ChannelSummary } from '../messages/channel-list/schema.ts'
export type {
  AskInfo,
  Block,
  DeletedMessage,
  FeedResponse,
  Message,
  MessageBody,
} from '../messages/schema.ts'
export type { SearchResponse, SearchResult } from '../messages/search/schema.ts'
export type { PushDevice } from '../push/schema.ts'

/** Who is logged in, as a login, a sign-up or `/v1/app/me` answers it. */
export type Me = SignedInUser['user']

/** A `secret_request` block's record: the public key its secret is sealed to, and its status. */
export type SecretRecord = Static<typeof SecretRequest>
