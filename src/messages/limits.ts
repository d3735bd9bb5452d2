import { LABEL_MAX_CHARS } from '../core/labels.ts'

/**
 * Size limits of messages (and of a channel's files). The spec leaves them open; these are generous for agents and keep
 * one channel from filling a Raspberry Pi's disk or memory. Documented in docs/limits.md.
 */
export const LIMITS = {
  /** The serialised `body` of one message. */
  bodyBytes: 256 * 1024,
  blocks: 100,
  titleChars: 500,
  textChars: 64 * 1024,
  blockIdChars: 64,
  choiceOptions: 50,
  /** One answer, serialised (free text, html replies). */
  answerBytes: 64 * 1024,
  pinKeyChars: 64,
  pinsPerChannel: 50,
  labelChars: LABEL_MAX_CHARS,
  /** Longest `expires_in`: 30 days. */
  expiresInSeconds: 30 * 24 * 3600,
  /** Files one channel may hold (409 past it). */
  filesPerChannel: 1000,
  /** Bytes of files one channel may hold, all uploads together: 1 GiB (413 past it). */
  channelStorageBytes: 1024 ** 3,
  /** Channels (connected agents) one person may have (409 past it). */
  channelsPerPerson: 100,
  /** Bytes of files all of one person's channels may hold together: 5 GiB (413 past it). */
  personStorageBytes: 5 * 1024 ** 3,
  /** Most messages returned by one feed read; `has_more` says when there are more. */
  feedPage: 200,
} as const
