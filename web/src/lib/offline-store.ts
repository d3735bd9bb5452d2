import type { FileInfo, Info, Me, Message, MessageBody } from './types.ts'

/**
 * What the app keeps in IndexedDB to open offline: who is logged in and the server's info (to
 * start at all), the channel list, each thread's newest messages as last seen, and the outbox
 * of messages written offline. Only the app reads it, never the service worker: API answers are
 * not kept in Cache Storage, where logging out could not reliably reach them. Logging out (or
 * another person logging in) clears it all.
 *
 * Every call resolves, never rejects: without IndexedDB (a private window that refuses it)
 * the app works as before, only not offline.
 */
const DB = 'hark-offline'
const VERSION = 1
/** Small records by name: `me`, `info`, `channels`. */
const KV = 'kv'
/** One record per channel: its newest messages and pins, keyed by the channel id. */
const THREADS = 'threads'
/** Messages waiting to be sent, keyed by their Idempotency-Key. */
const OUTBOX = 'outbox'

/** The newest messages kept of each thread: a screenful several times over, a few hundred KB. */
export const KEPT_PER_THREAD = 200

export interface SavedThread {
  channelId: string
  messages: Message[]
  pins: Message[]
  hasOlder: boolean
}

/** A file sent with a queued message: its bytes wait here (IndexedDB stores a Blob as is). */
export interface QueuedFile {
  name: string
  blob: Blob
  /** The server's answer once uploaded: kept, so no later try uploads it again. */
  uploaded?: FileInfo
}

/** A message written but not yet acknowledged by the server. */
export interface QueuedSend {
  /** The Idempotency-Key, made once when the person pressed Send: every try sends the same. */
  key: string
  channelId: string
  body: MessageBody
  /** Uploaded first, then sent as the body's last blocks. */
  files?: QueuedFile[]
  createdAt: number
  /** Set when the server refused it (not a network failure): it will not be tried again. */
  error?: string
}

let opened: Promise<IDBDatabase | undefined> | undefined

function open(): Promise<IDBDatabase | undefined> {
  opened ??= new Promise((resolve) => {
    try {
      const request = indexedDB.open(DB, VERSION)
      request.onupgradeneeded = () => {
        const db = request.result
        db.createObjectStore(KV)
        db.createObjectStore(THREADS, { keyPath: 'channelId' })
        db.createObjectStore(OUTBOX, { keyPath: 'key' })
      }
      request.onsuccess = () => resolve(request.result)
      request.onerror = () => resolve(undefined)
      request.onblocked = () => resolve(undefined)
    } catch {
      resolve(undefined)
    }
  })
  return opened
}

/** Runs one request in its own transaction; `fallback` when IndexedDB is unavailable. */
async function run<T>(
  store: string,
  mode: IDBTransactionMode,
  make: (s: IDBObjectStore) => IDBRequest,
  fallback: T,
): Promise<T> {
  const db = await open()
  if (!db) return fallback
  return new Promise((resolve) => {
    try {
      const tx = db.transaction(store, mode)
      const request = make(tx.objectStore(store))
      // Resolve on commit for writes, so what is said saved is on disk.
      tx.oncomplete = () => resolve((request.result as T) ?? fallback)
      tx.onerror = () => resolve(fallback)
      tx.onabort = () => resolve(fallback)
    } catch {
      resolve(fallback)
    }
  })
}

const get = <T>(store: string, key: string) =>
  run<T | undefined>(store, 'readonly', (s) => s.get(key), undefined)
const put = (store: string, value: unknown, key?: string) =>
  run<unknown>(store, 'readwrite', (s) => s.put(value, key), undefined).then(() => {})

export const saveStart = (me: Me, info: Info) =>
  Promise.all([put(KV, me, 'me'), put(KV, info, 'info')]).then(() => {})
export const savedStart = async () => {
  const [me, info] = await Promise.all([get<Me>(KV, 'me'), get<Info>(KV, 'info')])
  return me && info ? { me, info } : undefined
}

export const saveChannels = <T>(channels: T[]) => put(KV, channels, 'channels')
export const savedChannels = <T>() => get<T[]>(KV, 'channels')

export const saveThread = (thread: SavedThread) =>
  put(THREADS, { ...thread, messages: thread.messages.slice(-KEPT_PER_THREAD) })
export const savedThread = (channelId: string) => get<SavedThread>(THREADS, channelId)

export const queue = (send: QueuedSend) => put(OUTBOX, send)
export const unqueue = (key: string) =>
  run<unknown>(OUTBOX, 'readwrite', (s) => s.delete(key), undefined).then(() => {})
/** Every queued send, oldest first (the order they were written in). */
export const queued = () =>
  run<QueuedSend[]>(OUTBOX, 'readonly', (s) => s.getAll(), []).then((all) =>
    all.sort((a, b) => a.createdAt - b.createdAt),
  )

/** Forgets everything kept: on logging out, and when someone else logs in on this browser. */
export async function clearOffline(): Promise<void> {
  const db = await open()
  if (!db) return
  await Promise.all(
    [KV, THREADS, OUTBOX].map((store) =>
      run<unknown>(store, 'readwrite', (s) => s.clear(), undefined),
    ),
  )
}
