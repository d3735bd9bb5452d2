import { useEffect, useRef, useState } from 'preact/hooks'
import { API_PREFIX } from './client.ts'

/**
 * History routing without a framework: the path decides the screen, and secrets that must
 * never reach a server log (setup token, invite code) travel in the fragment.
 */
const listeners = new Set<() => void>()
const notify = () => {
  for (const l of listeners) l()
}
window.addEventListener('popstate', notify)

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', to)
  else history.pushState(null, '', to)
  notify()
}

/** Re-renders the caller whenever the location changes. */
export function useLocation(): { path: string; search: URLSearchParams; hash: string } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const listener = () => setTick((n) => n + 1)
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
    }
  }, [])
  return {
    path: location.pathname,
    search: new URLSearchParams(location.search),
    hash: location.hash.slice(1),
  }
}

const revisits = new Set<() => void>()

/**
 * Calls `listener` when a link to the address already shown is followed again: the location
 * does not change then, so nothing else re-renders, yet the person asked to be taken there
 * (a message scrolled away from, say). Cleared with the caller.
 */
export function useRevisit(listener: () => void): void {
  const latest = useRef(listener)
  latest.current = listener
  useEffect(() => {
    const call = () => latest.current()
    revisits.add(call)
    return () => {
      revisits.delete(call)
    }
  }, [])
}

/** A click on an in-app link: route without reloading, unless the person asked for a new tab. */
export function onLinkClick(event: MouseEvent): void {
  const a = (event.target as Element).closest('a')
  if (!a || event.defaultPrevented || event.button !== 0) return
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  if (a.target || a.hasAttribute('download') || a.origin !== location.origin) return
  if (a.pathname.startsWith(API_PREFIX)) return
  event.preventDefault()
  const to = a.pathname + a.search + a.hash
  if (to !== location.pathname + location.search + location.hash) {
    navigate(to)
    return
  }
  // The same address again: no second history entry (Back would seem to do nothing), as a
  // browser does for a link to its own page; whoever shows it is told instead.
  for (const listener of revisits) listener()
}

/**
 * A secret from the fragment, taken (and dropped from the address bar) by `take`. The link may
 * be opened again in a tab that already shows the page: only the fragment changes, so a fresh
 * secret is taken on `hashchange`.
 */
export function useFragmentSecret(take: () => string | undefined): string {
  const [value, setValue] = useState(() => take() ?? '')
  useEffect(() => {
    const onHash = () => {
      const fresh = take()
      if (fresh) setValue(fresh)
    }
    window.addEventListener('hashchange', onHash)
    return () => window.removeEventListener('hashchange', onHash)
  }, [take])
  return value
}
