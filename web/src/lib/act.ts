/**
 * The notification's Allow. A service worker cannot run WebAuthn, so the Allow on an
 * approval's notification opens the app at the message with `?act=allow` (src/push/payload.ts)
 * and the card signs there. The worker also leaves a note in Cache Storage (`INTENTS`, read
 * here and in web/src/sw.ts) that only it can write: the passkey prompt starts by itself only
 * when the person tapped Allow on the notification a moment ago. The same link from anywhere
 * else (an agent's message, say) only lands on the card with Allow focused: opening a link
 * is no decision to allow anything.
 */

/** The cache the worker writes its notes into; never one of the shell's caches. */
export const INTENTS = 'hark-intents'
/** A note older than this is stale: the tap was not the one that opened this page. */
const FRESH_MS = 2 * 60_000

export const intentKey = (messageId: string) => `/intent/allow/${encodeURIComponent(messageId)}`

/** Is the address `/c/…?act=allow#<messageId>`? */
export function allowLinkFor(messageId: string): boolean {
  if (new URLSearchParams(location.search).get('act') !== 'allow') return false
  try {
    return decodeURIComponent(location.hash.slice(1)) === messageId
  } catch {
    return false
  }
}

/** Drops `act` from the address, so a reload or a shared link does not ask again. */
export function clearAct(): void {
  const params = new URLSearchParams(location.search)
  params.delete('act')
  const search = params.toString()
  history.replaceState(
    history.state,
    '',
    `${location.pathname}${search ? `?${search}` : ''}${location.hash}`,
  )
}

/** Takes (and removes) the worker's note for this message: true if it is fresh. */
export async function takeIntent(messageId: string): Promise<boolean> {
  if (typeof caches === 'undefined') return false
  try {
    const cache = await caches.open(INTENTS)
    const hit = await cache.match(intentKey(messageId))
    if (!hit) return false
    await cache.delete(intentKey(messageId))
    const at = Number(await hit.text())
    return Number.isFinite(at) && Math.abs(Date.now() - at) < FRESH_MS
  } catch {
    return false
  }
}
