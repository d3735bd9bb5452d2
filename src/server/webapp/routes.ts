import { gzipSync } from 'node:zlib'
import { Elysia } from 'elysia'
import { WEB_BUILD, webFiles } from './assets.gen.ts'
import { EMBED_HEADERS, headersFor, SPA_ROUTES } from './headers.ts'

/**
 * Serves the answering web app: the files that scripts/build-web.ts wrote to web/dist and
 * embedded in the binary, with strict headers (see headers.ts), gzipped when the client takes
 * it, and index.html for every route the app handles in the browser.
 */

interface Served {
  body: Uint8Array<ArrayBuffer>
  gzip?: Uint8Array<ArrayBuffer>
  headers: Record<string, string>
  etag: string
}

const COMPRESSIBLE = /\.(js|css|html|webmanifest)$|^\/$|^\/embed$/

/** Read and compressed on first use, then kept: the whole app is a few hundred KB. */
const cache = new Map<string, Promise<Served>>()

function load(url: string): Promise<Served> {
  let found = cache.get(url)
  if (!found) {
    found = (async () => {
      const body = await Bun.file(webFiles[url] as string).bytes()
      return {
        body,
        gzip: COMPRESSIBLE.test(url) ? new Uint8Array(gzipSync(body, { level: 9 })) : undefined,
        headers: url === '/embed' ? EMBED_HEADERS : headersFor(url),
        etag: `"${WEB_BUILD}-${Bun.hash(body).toString(36)}"`,
      }
    })()
    cache.set(url, found)
  }
  return found
}

async function respond(url: string, request: Request): Promise<Response> {
  const file = await load(url)
  const headers: Record<string, string> = { ...file.headers, etag: file.etag }
  if (request.headers.get('if-none-match') === file.etag) {
    return new Response(null, { status: 304, headers })
  }
  if (file.gzip) {
    headers.vary = 'accept-encoding'
    if (/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')) {
      headers['content-encoding'] = 'gzip'
      return new Response(file.gzip, { headers })
    }
  }
  return new Response(file.body, { headers })
}

/**
 * An app path no screen of the app is served for (see `isAppPath`): the shell, so the app shows
 * its "not found" screen, with status 404 and no validator (it is not the shell's own URL).
 */
export async function appNotFound(request: Request): Promise<Response> {
  const shell = await respond('/', new Request(request.url, { headers: acceptOnly(request) }))
  const headers = new Headers(shell.headers)
  headers.delete('etag')
  return new Response(shell.body, { status: 404, headers })
}

const acceptOnly = (request: Request) => ({
  'accept-encoding': request.headers.get('accept-encoding') ?? '',
})

const hidden = { detail: { hide: true } }

export const webRoutes = () => {
  const app = new Elysia({ name: 'hark/web' })
  for (const url of Object.keys(webFiles)) {
    app.get(url, ({ request }) => respond(url, request), hidden)
  }
  // Screens the app routes itself get the shell; it reads the path (and the fragment).
  for (const route of SPA_ROUTES) {
    app.get(route, ({ request }) => respond('/', request), hidden)
  }
  return app
}
