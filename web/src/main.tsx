import { render } from 'preact'
import { App } from './app.tsx'
import { applyTheme, savedTheme } from './lib/theme.ts'
import './styles/index.css'

applyTheme(savedTheme())
render(<App />, document.getElementById('app') as HTMLElement)

// The service worker keeps the shell for offline starts and makes the app installable.
if ('serviceWorker' in navigator) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js').catch(() => {
      // Not fatal: the app works without it, only not offline.
    })
  })
}
