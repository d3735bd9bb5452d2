/**
 * The web app's response headers. The app's CSP allows only its own bundle: no inline script,
 * no eval, no foreign code. Images may come from https only because markdown images load after
 * the person agrees, one by one; `frame-src 'self'` is for `/embed`, the host of html blocks,
 * and is also what stops an html block navigating its frame to another origin (the browser
 * checks it before any request): never loosen it (docs/decisions.md, "Web app").
 */

/** Paths the app routes in the browser; each gets index.html. */
export const SPA_ROUTES = [
  '/login',
  '/signup',
  '/setup',
  '/pair',
  '/join',
  '/invite',
  '/enrol',
  '/settings',
  '/policies',
  '/c/*',
] as const

/**
 * The API's paths (any version): its answers are JSON, a 404 included (`{"error": "no route
 * ..."}`). Every other path that names no file is the app's: a browser that opens an unknown
 * one gets the app with status 404, so a person who follows an old or mistyped link sees the
 * app's "not found" screen with a way on, never a raw JSON error. A path with a file extension
 * (`/assets/x.js`) is a file, and a client that does not ask for a page (an agent, curl, an SDK
 * with a wrong base URL) keeps the JSON answer.
 */
const API_PATHS = /^\/(v\d+|health|metrics)(\/|$)/

export const isAppPath = (path: string): boolean => !API_PATHS.test(path) && !/\.[^/]*$/.test(path)

/** A browser opening a page asks for HTML (`Accept: text/html,...`); API clients do not. */
export const wantsPage = (request: Request): boolean =>
  request.method === 'GET' && /\btext\/html\b/.test(request.headers.get('accept') ?? '')

export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: https:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * `/embed` runs an agent's html: inline scripts and styles, but no network of any kind (no
 * fetch, no images from elsewhere, no forms, no navigation of the app; WebRTC, which no CSP
 * reaches, is taken away by the host script before the agent's), and `sandbox` in the
 * CSP itself, so the page has an opaque origin even if someone opens it directly. No CSP here
 * can stop the frame navigating itself (`navigate-to` never shipped): the app's `frame-src`
 * and its check after every load of the frame do (see html-embed.tsx).
 */
export const EMBED_CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline' 'unsafe-eval'",
  "style-src 'unsafe-inline'",
  'img-src data: blob:',
  'font-src data:',
  'media-src data: blob:',
  "form-action 'none'",
  "base-uri 'none'",
  // No nested frame may run code (it would have WebRTC, which no CSP governs): the host's
  // default policy, the only one allowed, refuses srcdoc and javascript: URLs in them
  // (web/embed.html, issue 31).
  "require-trusted-types-for 'script'",
  'trusted-types default',
  'sandbox allow-scripts',
  // Only the app may frame it: elsewhere a reply() could be staged by another page's UI.
  "frame-ancestors 'self'",
].join('; ')

const SECURITY = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
  png: 'image/png',
  webmanifest: 'application/manifest+json',
}

const IMMUTABLE = 'public, max-age=31536000, immutable'
/** Always asked again (with the ETag): a new build must reach people at once. */
const REVALIDATE = 'no-cache'
const DAY = 'public, max-age=86400'

export function headersFor(url: string): Record<string, string> {
  if (url === '/') {
    return {
      ...SECURITY,
      'content-type': TYPES.html as string,
      'cache-control': REVALIDATE,
      'content-security-policy': APP_CSP,
      'x-frame-options': 'DENY',
    }
  }
  const ext = url.slice(url.lastIndexOf('.') + 1)
  const cache = url.startsWith('/assets/')
    ? IMMUTABLE
    : url === '/sw.js' || url === '/manifest.webmanifest'
      ? REVALIDATE
      : DAY
  return {
    ...SECURITY,
    'content-type': TYPES[ext] ?? 'application/octet-stream',
    'cache-control': cache,
  }
}

export const EMBED_HEADERS: Record<string, string> = {
  ...SECURITY,
  'content-type': TYPES.html as string,
  'cache-control': REVALIDATE,
  'content-security-policy': EMBED_CSP,
}
