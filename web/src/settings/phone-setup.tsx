import { useState } from 'preact/hooks'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import * as client from '../lib/client.ts'

/**
 * Getting the phone ready (issue 27), in the setup wizard and in Settings: install the app
 * (iOS delivers web push only to an installed web app), and a test notification that proves the
 * whole round trip: sent, delivered, shown, and tapped, which opens the page it came from with
 * `?notification=test`.
 */

type Platform = 'ios' | 'android' | 'desktop'

function platformOf(userAgent: string): Platform {
  // iPadOS says "Macintosh" but has touch.
  if (
    /iPhone|iPad|iPod/.test(userAgent) ||
    (/Macintosh/.test(userAgent) && navigator.maxTouchPoints > 1)
  )
    return 'ios'
  if (/Android/.test(userAgent)) return 'android'
  return 'desktop'
}

/** Opened from the home screen (an installed web app), not in a browser tab. */
export const installed = () =>
  window.matchMedia('(display-mode: standalone)').matches ||
  (navigator as Navigator & { standalone?: boolean }).standalone === true

/** On an iPhone or iPad in Safari, not installed: no push at all until it is. */
export const iosNeedsInstall = () => platformOf(navigator.userAgent) === 'ios' && !installed()

const STEPS: { platform: Platform; title: string; steps: string[] }[] = [
  {
    platform: 'ios',
    title: 'iPhone and iPad (Safari)',
    steps: [
      'Tap the Share button (the square with an arrow) at the bottom of Safari.',
      'Tap “Add to Home Screen”, then “Add”.',
      'Open Hark from the new icon on your home screen and log in there.',
      'Turn on notifications in the app you just opened: iOS sends notifications only to an installed web app (iOS 16.4 or later).',
    ],
  },
  {
    platform: 'android',
    title: 'Android (Chrome)',
    steps: [
      'Tap the ⋮ menu at the top right of Chrome.',
      'Tap “Add to Home screen” (or “Install app”), then “Install”.',
      'Open Hark from its icon. Notifications also work in a Chrome tab, but the app opens faster and stays logged in.',
    ],
  },
  {
    platform: 'desktop',
    title: 'Computer (Chrome, Edge, Firefox, Safari)',
    steps: [
      'Chrome and Edge: click the install icon at the right end of the address bar. Safari: File → Add to Dock.',
      'Firefox needs no install: notifications work in a tab.',
    ],
  },
]

/** How to install the app on this device, its own platform's steps open first. */
export function InstallSteps() {
  const mine = platformOf(navigator.userAgent)
  if (installed()) {
    return <p data-check="installed">Hark is installed on this device.</p>
  }
  const ordered = [...STEPS].sort(
    (a, b) => Number(b.platform === mine) - Number(a.platform === mine),
  )
  return (
    <div class="install-steps stack">
      <h3>Install the app</h3>
      <p class="muted">
        Installed, Hark opens like an app from the home screen; on iPhone and iPad it is the only
        way to get notifications.
      </p>
      {ordered.map((p) => (
        // A phone's own steps open; on a computer installing is optional, so all stay closed.
        <details
          key={p.platform}
          open={p.platform === mine && mine !== 'desktop'}
          data-platform={p.platform}
        >
          <summary>Install on {p.title}</summary>
          <ol>
            {p.steps.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ol>
        </details>
      ))}
    </div>
  )
}

/** `?notification=test`: this page was opened by tapping the test notification. */
export function testTapped(): boolean {
  return new URLSearchParams(location.search).get('notification') === 'test'
}

/** "Send a test notification", and what happened when the tap on it brought the person back. */
export function TestNotification({ opens }: { opens: 'settings' | 'setup' }) {
  const [tapped] = useState(testTapped)
  const [sent, setSent] = useState<number | null>(null)
  const [send, sending, error] = useAction(async () => {
    setSent(await client.sendTestNotification(opens))
  })
  return (
    <div class="stack test-notification">
      {tapped && (
        <p class="success-note" role="status" data-check="test-tapped">
          It works: the test notification reached this device and tapping it opened Hark.
        </p>
      )}
      <Button busy={sending} onClick={() => send()}>
        Send a test notification
      </Button>
      {sent !== null && (
        <p role="status" class="muted">
          Sent to {sent === 1 ? 'your device' : `your ${sent} devices`}. When it arrives, tap it: it
          opens Hark and says so here. Nothing after a minute? See that notifications for this
          browser are allowed in the system’s settings, and that Focus or Do Not Disturb is off.
        </p>
      )}
      <ErrorNote error={error} />
    </div>
  )
}
