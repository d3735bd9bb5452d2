import { ApiError, errorText, retryable } from './api.ts'
import * as client from './client.ts'
import { onWake, waitToRetry } from './connection.ts'
import { type QueuedSend, queue, queued, unqueue } from './offline-store.ts'
import type { Block, FileInfo, Message, MessageBody } from './types.ts'
import { useWatched } from './watched.ts'

/**
 * The person's messages on their way to the agent. Each is written to IndexedDB with an
 * Idempotency-Key made once, at Send, before its first try: a send that cannot reach the server
 * waits there (through a reload, a closed tab) and is tried again when the server answers, and
 * a try whose answer was lost is answered by the server with the first message instead of a
 * second one. Exactly once, in the order written; a refusal (a 4xx) is shown, not retried.
 * Attached files wait with their message, bytes and all, and are uploaded just before it.
 */

let entries: QueuedSend[] = []
const watchers = new Set<(all: QueuedSend[]) => void>()
const sentWatchers = new Set<(m: Message) => void>()
/** The sends of this page awaiting their first try's outcome (the composer waits for it). */
const firstTry = new Map<string, (outcome: Message | 'queued' | Error) => void>()

function publish(next: QueuedSend[]) {
  entries = next
  for (const w of watchers) w(entries)
}

/** Loaded once per page: what an earlier page (or one before a reload) left unsent. */
const loaded = queued().then((saved) => {
  const known = new Set(entries.map((e) => e.key))
  publish([...saved.filter((e) => !known.has(e.key)), ...entries])
  if (entries.length > 0) void flush()
})

let flushing: Promise<void> | undefined

/** Sends what waits, one at a time in order; one run at a time per page. */
function flush(): Promise<void> {
  flushing ??= drain().finally(() => {
    flushing = undefined
  })
  return flushing
}

async function drain(): Promise<void> {
  await loaded
  let failures = 0
  for (;;) {
    const next = entries.find((e) => e.error === undefined)
    if (!next) return
    if (!navigator.onLine) {
      // No network at all: no try until the browser says it is back ('online' ends the wait).
      for (const e of entries) settle(e.key, 'queued')
      await waitToRetry(++failures)
      continue
    }
    try {
      const message = await client.sendMessage(next.channelId, await withFiles(next), next.key)
      failures = 0
      // Shown as sent at once, not after the store's write: the live feed may bring the message
      // meanwhile, and it must not stand twice in the thread. Should the page go before the
      // store forgets it, the next page sends it again under the same key: replayed, not doubled.
      publish(entries.filter((e) => e.key !== next.key))
      for (const w of sentWatchers) w(message)
      settle(next.key, message)
      await unqueue(next.key)
    } catch (error) {
      // Logged out meanwhile: keep them for the login screen's outcome (logging out clears).
      if (error instanceof ApiError && error.status === 401) return
      if (retryable(error)) {
        // Everything behind it waits too: the agent reads them in the order written.
        for (const e of entries) settle(e.key, 'queued')
        await waitToRetry(++failures)
        continue
      }
      // Refused (too long, the channel gone): shown, kept until the person dismisses it, or,
      // when the composer is still waiting on it, handed back there with the text.
      if (firstTry.has(next.key)) {
        await drop(next.key)
        settle(next.key, error instanceof Error ? error : new Error(errorText(error)))
      } else {
        const latest = entries.find((e) => e.key === next.key) ?? next
        const failed = { ...latest, error: errorText(error) }
        await queue(failed)
        publish(entries.map((e) => (e.key === next.key ? failed : e)))
      }
    }
  }
}

const INLINE_IMAGES = /^image\/(png|jpeg|gif|webp|avif)$/

/** A file's block: an image shown in the thread, anything else a download. */
function blockOf(info: FileInfo): Block {
  return INLINE_IMAGES.test(info.mime)
    ? { type: 'image', file_id: info.file_id, name: info.name }
    : { type: 'file', file_id: info.file_id, name: info.name, mime: info.mime, size: info.size }
}

/**
 * Uploads the send's files the server does not have yet, keeping each answer as it comes (a
 * reload or a failed try after it does not upload that file again, and every try of the
 * message carries the same body under its key), and answers the body: a block per file last.
 * Each upload has a key of its own, made from the message's (`KEY/file/N`): one whose answer
 * was lost is answered again by the server, not stored twice.
 */
async function withFiles(send: QueuedSend): Promise<MessageBody> {
  let files = send.files ?? []
  if (files.length === 0) return send.body
  for (let i = 0; i < files.length; i++) {
    const file = files[i]
    if (!file || file.uploaded) continue
    const bytes = new File([file.blob], file.name, { type: file.blob.type })
    const info = await client.uploadFile(send.channelId, bytes, `${send.key}/file/${i}`)
    files = files.map((f, j) => (j === i ? { ...f, uploaded: info } : f))
    const kept: QueuedSend = { ...send, files }
    await queue(kept)
    publish(entries.map((e) => (e.key === send.key ? kept : e)))
  }
  const blocks = files.flatMap((f) => (f.uploaded ? [blockOf(f.uploaded)] : []))
  return { ...send.body, blocks: [...(send.body.blocks ?? []), ...blocks] }
}

function settle(key: string, outcome: Message | 'queued' | Error) {
  firstTry.get(key)?.(outcome)
  firstTry.delete(key)
}

/**
 * Sends `body` with `files` to the channel's agent, safe to retry: answers the message once
 * the server has it, or 'queued' when it could not be reached (it is kept, files too, and sent
 * later). Throws the server's refusal (an ApiError) when it will never be taken, so the
 * composer keeps the text and the files.
 */
export async function send(
  channelId: string,
  body: MessageBody,
  files: File[] = [],
): Promise<Message | 'queued'> {
  const entry: QueuedSend = { key: crypto.randomUUID(), channelId, body, createdAt: Date.now() }
  if (files.length > 0) entry.files = files.map((file) => ({ name: file.name, blob: file }))
  const outcome = new Promise<Message | 'queued' | Error>((resolve) =>
    firstTry.set(entry.key, resolve),
  )
  await queue(entry)
  publish([...entries, entry])
  void flush()
  // Known to be offline: the person need not wait for a try that cannot work.
  if (!navigator.onLine) settle(entry.key, 'queued')
  const result = await outcome
  if (result instanceof Error) throw result
  return result
}

/** Gives up on a send the server refused. */
export async function drop(key: string): Promise<void> {
  await unqueue(key)
  publish(entries.filter((e) => e.key !== key))
}

/** Forgets the page's copy (logging out cleared the store underneath). */
export function forgetOutbox(): void {
  publish([])
}

/** A channel's messages waiting to be sent (or refused), oldest first. */
export function useOutbox(channelId: string): QueuedSend[] {
  const all = useWatched(watchers, () => entries)
  return all.filter((e) => e.channelId === channelId)
}

/** Calls `listener` with each queued message the server took (to show it without waiting). */
export function onQueuedSent(listener: (m: Message) => void): () => void {
  sentWatchers.add(listener)
  return () => sentWatchers.delete(listener)
}

// Back online, focused, visible: anything waiting goes now (drain's wait ends on these too;
// this starts a run when none is under way, as after a reload with nothing else to do).
onWake(() => {
  if (entries.some((e) => e.error === undefined)) void flush()
})
