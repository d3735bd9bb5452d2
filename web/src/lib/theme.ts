/**
 * Light, dark, or whatever the system says. The choice is kept on this device only; the
 * stylesheet follows `prefers-color-scheme` unless `data-theme` on <html> says otherwise.
 */
export type Theme = 'system' | 'light' | 'dark'

const KEY = 'hark.theme'

export function savedTheme(): Theme {
  try {
    const t = localStorage.getItem(KEY)
    return t === 'light' || t === 'dark' ? t : 'system'
  } catch {
    return 'system'
  }
}

export function applyTheme(theme: Theme, save = false): void {
  if (theme === 'system') document.documentElement.removeAttribute('data-theme')
  else document.documentElement.setAttribute('data-theme', theme)
  if (!save) return
  try {
    if (theme === 'system') localStorage.removeItem(KEY)
    else localStorage.setItem(KEY, theme)
  } catch {
    // Storage may be off (private mode): the choice lasts for this visit.
  }
}
