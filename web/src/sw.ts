/**
 * The service worker: keeps the app's shell (html, bundle, icons) so the app opens offline
 * and installs as a PWA. The API is never cached: answers and messages must be live.
 * `HARK_SHELL` and `HARK_BUILD` are defined by scripts/build-web.ts; a new build changes this
 * file, so the browser installs the new worker and the old cache is dropped.
 */
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
interface WorkerScope {
  addEventListener(type: 'install' | 'activate', listener: (event: WorkerEvent) => void): void
  addEventListener(type: 'fetch', listener: (event: WorkerFetchEvent) => void): void
  skipWaiting(): Promise<void>
  clients: { claim(): Promise<void> }
  location: Location
}

export {}

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
