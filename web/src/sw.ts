/**
 * The service worker: keeps the app's shell (html, bundle, icons) so the app opens offline
 * and installs as a PWA. The API is never cached: answers and messages must be live.
 * `HARK_SHELL` and `HARK_BUILD` are defined by scripts/build-web.ts; a new build changes this
 * file, so the browser installs the new worker and the old cache is dropped.
 */
import { INTENTS, intentKey } from './lib/act.ts'

declare const HARK_SHELL: string[]
declare const HARK_BUILD: string

// The DOM lib has no service-worker types, and the webworker lib clashes with it in one
// program; these few shapes are all this file needs.
interface WorkerEvent extends Event {
  waitUntil(promise: Promise<unknown>): void
}
interface WorkerFetchEvent extends WorkerEvent {
  request: Request
  respondWith(response: Promise<Response>): void
}
interface WorkerPushEvent extends WorkerEvent {
  data: { json(): unknown } | null
}
interface WorkerNotificationEvent extends WorkerEvent {
  action: string
  notification: Notification
}
interface WindowClient {
  url: string
  focus(): Promise<WindowClient>
  navigate(url: string): Promise<WindowClient | null>
}
interface WorkerScope {
  addEventListener(type: 'install' | 'activate', listener: (event: WorkerEvent) => void): void
  addEventListener(type: 'fetch', listener: (event: WorkerFetchEvent) => void): void
  addEventListener(type: 'push', listener: (event: WorkerPushEvent) => void): void
  addEventListener(
    type: 'notificationclick',
    listener: (event: WorkerNotificationEvent) => void,
  ): void
  skipWaiting(): Promise<void>
  clients: {
    claim(): Promise<void>
    matchAll(options: { type: 'window'; includeUncontrolled: boolean }): Promise<WindowClient[]>
    openWindow(url: string): Promise<WindowClient | null>
  }
  registration: ServiceWorkerRegistration
  location: Location
}

const worker = self as unknown as WorkerScope
const CACHE = `hark-shell-${HARK_BUILD}`

worker.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(HARK_SHELL))
      .then(() => worker.skipWaiting()),
  )
})

worker.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) =>
        Promise.all(
          keys
            .filter((k) => k.startsWith('hark-shell-') && k !== CACHE)
            .map((k) => caches.delete(k)),
        ),
      )
      .then(() => worker.clients.claim()),
  )
})

async function fromCache(request: Request | string): Promise<Response> {
  const hit = await caches.match(request, { cacheName: CACHE })
  return hit ?? fetch(request)
}

worker.addEventListener('fetch', (event) => {
  const request = event.request
  if (request.method !== 'GET') return
  const url = new URL(request.url)
  if (url.origin !== worker.location.origin) return
  // Pages: the network first (a new build shows at once), the cached shell when offline.
  if (request.mode === 'navigate') {
    event.respondWith(fetch(request).catch(() => fromCache('/')))
    return
  }
  // Hashed assets never change: the cache first.
  if (HARK_SHELL.includes(url.pathname)) event.respondWith(fromCache(request))
})

/** What the server pushes (see src/push/payload.ts); decrypted by the browser already. */
interface PushPayload {
  kind: 'message' | 'test'
  channel_label: string | null
  message_id: string | null
  title: string | null
  text: string
  url: string
  /** `answer`: sent from here; `url`: opens the app there instead (an Allow is signed in the app). */
  actions?: { action: string; title: string; answer?: unknown; url?: string }[]
  capability?: string
  /** An approval marked destructive. */
  danger?: boolean
}

// Every push shows a notification: browsers require it (userVisibleOnly) and revoke push
// from a worker that stays silent.
worker.addEventListener('push', (event) => {
  let payload: PushPayload
  try {
    payload = event.data?.json() as PushPayload
  } catch {
    payload = {
      kind: 'message',
      channel_label: 'Hark',
      message_id: null,
      title: null,
      text: 'New message',
      url: '/',
    }
  }
  const options: NotificationOptions & { actions?: { action: string; title: string }[] } = {
    body: payload.title ? `${payload.title}\n${payload.text}` : payload.text,
    tag: payload.message_id ?? undefined,
    icon: '/icons/icon-192.png',
    data: payload,
  }
  if (payload.actions && payload.capability) {
    options.actions = payload.actions.map(({ action, title }) => ({ action, title }))
  }
  const label = payload.channel_label ?? 'Hark'
  // A destructive action must not slip by: marked, and kept on screen until the person acts.
  if (payload.danger) options.requireInteraction = true
  event.waitUntil(
    showOrBatch(payload, () =>
      worker.registration.showNotification(payload.danger ? `⚠ ${label}` : label, options),
    ),
  )
})

/** The tag of the one notification that stands for several waiting approvals. */
const WAITING_TAG = 'hark-approvals-waiting'

const isApprovalPush = (p: PushPayload | undefined) =>
  p?.kind === 'message' && p.actions?.some((a) => a.action === 'allow') === true && !p.danger

/**
 * Several approvals waiting (from one agent or several): one notification says how many and
 * opens the Waiting-on-you list, instead of a stack of lock-screen cards. A destructive one is
 * never folded in: it stays on its own, marked and kept on screen.
 */
async function showOrBatch(payload: PushPayload, show: () => Promise<void>): Promise<void> {
  if (!isApprovalPush(payload)) return show()
  const shown = await worker.registration.getNotifications()
  const singles = shown.filter(
    (n) => isApprovalPush(n.data as PushPayload) && n.tag !== payload.message_id,
  )
  const batch = shown.find((n) => n.tag === WAITING_TAG)
  const before = singles.length + ((batch?.data as { count?: number })?.count ?? 0)
  if (before === 0) return show()
  const count = before + 1
  for (const n of singles) n.close()
  const waiting: PushPayload & { count: number } = {
    kind: 'message',
    channel_label: 'Hark',
    message_id: null,
    title: null,
    text: `${count} approvals wait on you`,
    url: '/',
    count,
  }
  await worker.registration.showNotification('Hark', {
    body: `${count} approvals wait on you\nLatest: ${payload.title ? `${payload.title}: ` : ''}${payload.text}`,
    tag: WAITING_TAG,
    icon: '/icons/icon-192.png',
    data: waiting,
  })
}

/**
 * The worker's one API call: it runs apart from the app, so not through the app's client. No
 * cookie is needed: the capability the push carried is the credential.
 */
function answerByCapability(capability: string, answer: unknown): Promise<Response> {
  return fetch('/v1/push/answer', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ capability, answer }),
  })
}

/** Answers with the push's capability; the person sees the outcome as a new notification. */
async function answerFromNotification(payload: PushPayload, action: string): Promise<void> {
  const chosen = payload.actions?.find((a) => a.action === action)
  if (!chosen || chosen.answer === undefined || !payload.capability) return
  let result: string
  try {
    const response = await answerByCapability(payload.capability, chosen.answer)
    // 403: the capability is unknown, used (this button was tapped before, or another device
    // answered) or expired; whether the question was answered is not known here.
    result = response.ok
      ? `Answered: ${chosen.title}`
      : response.status === 409
        ? 'Already answered or closed'
        : response.status === 403
          ? 'This button was already used or has expired: open the app to see the question'
          : 'Could not answer here: open the app'
  } catch {
    result = 'Offline: could not answer. Open the app to try again.'
  }
  await worker.registration.showNotification(payload.channel_label ?? 'Hark', {
    body: result,
    tag: payload.message_id ?? undefined,
    data: { ...payload, actions: undefined, capability: undefined },
  })
}

/** Only same-origin paths: a payload is ours, but never let one send the app elsewhere. */
const samePath = (url: string | undefined) =>
  url?.startsWith('/') && !url.startsWith('//') ? url : '/'

/**
 * The Allow of an approval: WebAuthn cannot run in a worker, so the app opens on the message
 * and signs there. The note left first tells the app the person tapped Allow here just now
 * (web/src/lib/act.ts): only then does its passkey prompt start by itself.
 */
async function openToSign(payload: PushPayload, url: string): Promise<void> {
  if (payload.message_id) {
    try {
      const cache = await caches.open(INTENTS)
      await cache.put(intentKey(payload.message_id), new Response(String(Date.now())))
    } catch {
      // No note: the app still opens on the card, with Allow focused for a tap.
    }
  }
  await openApp(url)
}

/** Focuses an open window of the app on `url`, or opens one. */
async function openApp(url: string): Promise<void> {
  const target = new URL(url, worker.location.origin).href
  const windows = await worker.clients.matchAll({ type: 'window', includeUncontrolled: true })
  const existing = windows.find((w) => new URL(w.url).origin === worker.location.origin)
  // `navigate` works only on a window this worker controls; otherwise a new window, rather
  // than focusing a page that does not show the message.
  const navigated = existing ? await existing.navigate(target).catch(() => null) : null
  if (navigated) {
    await navigated.focus()
    return
  }
  await worker.clients.openWindow(target)
}

worker.addEventListener('notificationclick', (event) => {
  const payload = event.notification.data as PushPayload | undefined
  event.notification.close()
  if (!payload) return
  const chosen = event.action ? payload.actions?.find((a) => a.action === event.action) : undefined
  if (chosen?.url) event.waitUntil(openToSign(payload, samePath(chosen.url)))
  else if (event.action) event.waitUntil(answerFromNotification(payload, event.action))
  else event.waitUntil(openApp(samePath(payload.url)))
})
