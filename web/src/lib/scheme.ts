import { useEffect, useState } from 'preact/hooks'

/**
 * The colour scheme the app shows right now: the person's choice in settings (`data-theme` on
 * <html>, theme.ts), else the system's. Html embeds are told it (issue 18), since a frame's
 * own `prefers-color-scheme` follows only the system, never the app's choice.
 */
export type Scheme = 'light' | 'dark'

const DARK = '(prefers-color-scheme: dark)'

export function currentScheme(): Scheme {
  const forced = document.documentElement.getAttribute('data-theme')
  if (forced === 'light' || forced === 'dark') return forced
  return matchMedia(DARK).matches ? 'dark' : 'light'
}

/** The current scheme, updated when the system's or the person's choice changes. */
export function useScheme(): Scheme {
  const [scheme, setScheme] = useState<Scheme>(currentScheme)
  useEffect(() => {
    const update = () => setScheme(currentScheme())
    const system = matchMedia(DARK)
    system.addEventListener('change', update)
    const choice = new MutationObserver(update)
    choice.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] })
    update()
    return () => {
      system.removeEventListener('change', update)
      choice.disconnect()
    }
  }, [])
  return scheme
}

/** Whether a media query matches, kept up to date (the phone layout's pins, say). */
export function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => matchMedia(query).matches)
  useEffect(() => {
    const list = matchMedia(query)
    const update = () => setMatches(list.matches)
    list.addEventListener('change', update)
    update()
    return () => list.removeEventListener('change', update)
  }, [query])
  return matches
}
