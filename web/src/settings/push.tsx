import { useEffect, useState } from 'preact/hooks'
import { Form } from '../components/form.tsx'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import { ApiError } from '../lib/api.ts'
import * as client from '../lib/client.ts'
import { fromNow } from '../lib/format.ts'
import { deviceName } from '../lib/passkey.ts'
import { useSession } from '../lib/session.ts'
import type { PushDevice } from '../lib/types.ts'
import { ListRow, RowAction, SettingsCard } from './card.tsx'
import { InstallSteps, iosNeedsInstall, TestNotification, testTapped } from './phone-setup.tsx'
import { useList } from './use-list.ts'

/** The VAPID public key (base64url) as the bytes `pushManager.subscribe` wants. */
function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/')
  const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4))
  const bytes = new Uint8Array(new ArrayBuffer(raw.length))
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i)
  return bytes
}

export const pushSupported = () =>
  'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window

/**
 * Turns notifications on for this device: permission (needs the click that called this),
 * the service worker's push subscription with the server's VAPID key, then registers it.
 */
export async function enablePush(vapidKey: string, name: string): Promise<void> {
  try {
    await subscribeThisDevice(vapidKey, name)
  } catch (error) {
    throw new Error(pushErrorText(error))
  }
}

const BLOCKED =
  'Notifications are blocked for Hark in this browser. Allow them in the site’s settings (the ' +
  'icon at the left of the address bar; on a phone: the system’s Settings → Notifications, ' +
  'or the browser’s site settings), then try again.'

/**
 * A browser's own failure ("Registration failed - permission denied", "... push service not
 * available") in words, with what to do (issue 28, item 15). An answer of the server is already
 * in words and passes as it is.
 */
export function pushErrorText(error: unknown): string {
  if (error instanceof ApiError) return error.message
  const name = error instanceof DOMException ? error.name : ''
  const message = error instanceof Error ? error.message : String(error)
  if (name === 'NotAllowedError' || /permission denied|not allowed/i.test(message)) {
    const permission = 'Notification' in window ? Notification.permission : 'denied'
    if (permission === 'default') {
      return 'The browser’s question was closed without an answer: press the button again and choose Allow.'
    }
    if (permission === 'denied') return BLOCKED
    // Allowed, and still refused: the browser cannot subscribe at all.
    return (
      'Notifications are allowed, but this browser refused to set them up. That happens in ' +
      'private windows and in browsers without a push service (Chromium builds without ' +
      'Google services, Brave with “Use Google services for push messaging” off). Use Chrome, ' +
      'Edge, Firefox or Safari in a normal window.'
    )
  }
  if (name === 'AbortError' || /push service/i.test(message)) {
    return (
      'This browser could not reach its push service (run by Google, Mozilla or Apple). Check ' +
      'that the device is online and try again. Some browsers have none: Brave (unless “Use ' +
      'Google services for push messaging” is on), Chromium builds without Google services, ' +
      'and private windows. Use Chrome, Edge, Firefox or Safari.'
    )
  }
  if (name === 'InvalidStateError' || /service worker|no active/i.test(message)) {
    return 'The app’s background worker is not ready yet: reload the page and try again.'
  }
  if (name === 'SecurityError' || /secure|https/i.test(message)) {
    return 'Notifications need Hark to be opened over HTTPS: open it at its https:// address.'
  }
  if (name === 'NotSupportedError') {
    return 'This browser cannot receive notifications. Try Chrome, Edge, Firefox or Safari.'
  }
  return message
}

async function subscribeThisDevice(vapidKey: string, name: string): Promise<void> {
  if (!pushSupported()) {
    throw new DOMException('This browser cannot receive notifications.', 'NotSupportedError')
  }
  const permission = await Notification.requestPermission()
  if (permission !== 'granted') throw new DOMException('permission denied', 'NotAllowedError')
  const registration =
    (await navigator.serviceWorker.getRegistration()) ??
    (await navigator.serviceWorker.register('/sw.js'))
  await navigator.serviceWorker.ready
  const key = keyBytes(vapidKey)
  const subscribe = () =>
    registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key })
  let subscription = await registration.pushManager.getSubscription()
  // Made under other keys (rotated, or lost with a data directory): no push service accepts
  // our pushes to it any more, so make a new one.
  if (subscription && !sameBytes(subscription.options.applicationServerKey, key)) {
    await subscription.unsubscribe()
    subscription = null
  }
  subscription ??= await subscribe()
  try {
    await client.addPushDevice(subscription.toJSON(), name)
  } catch (error) {
    // 409 on `endpoint`: this browser's endpoint is registered to another account (someone else
    // signed in here before); a new subscription has a new endpoint of its own. Any other 409
    // (the person has the most devices there can be) is theirs to read, not to retry.
    if (!(error instanceof ApiError) || error.status !== 409 || error.field !== 'endpoint') {
      throw error
    }
    await subscription.unsubscribe()
    await client.addPushDevice((await subscribe()).toJSON(), name)
  }
}

function sameBytes(a: ArrayBuffer | null, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.length) return false
  const view = new Uint8Array(a)
  return view.every((x, i) => x === b[i])
}

/** "Turn on notifications on this device": in settings and in the setup wizard. */
export function EnablePushButton({ onEnabled }: { onEnabled?: () => void }) {
  const { info } = useSession()
  const [done, setDone] = useState(false)
  const [enable, enabling, error] = useAction(async () => {
    await enablePush(info.vapid_public_key ?? '', deviceName())
    setDone(true)
    onEnabled?.()
  })
  // iOS has no push in a Safari tab; installed from the home screen, it has.
  if (iosNeedsInstall()) {
    return (
      <p class="muted" data-check="ios-install-first">
        On iPhone and iPad, notifications work only in the installed app: add Hark to your home
        screen, open it from there and turn them on in it.
      </p>
    )
  }
  if (!pushSupported() || !info.vapid_public_key) return null
  return (
    <div class="stack">
      <Button busy={enabling} onClick={() => enable()}>
        {done ? 'Notifications are on for this device' : 'Turn on notifications on this device'}
      </Button>
      <ErrorNote error={error} />
    </div>
  )
}

/** Notifications: this device on or off, every device, a test, and email reminders. */
export function PushSettings() {
  const { info } = useSession()
  const { items, error, reload } = useList(client.pushDevices)
  const [remove, , removeError] = useAction(async (d: PushDevice) => {
    if (!confirm(`Stop notifications to “${d.name ?? d.browser}”?`)) return
    await client.removePushDevice(d.id)
    await reload()
  })
  const [test, , testError] = useAction((d: PushDevice) => client.testPushDevice(d.id))
  return (
    <SettingsCard id="notifications" title="Notifications">
      <ErrorNote error={error ?? removeError ?? testError} />
      {!pushSupported() && <p class="muted">This browser cannot receive notifications.</p>}
      {items?.length === 0 && <p class="muted">No device gets notifications yet.</p>}
      <ul class="rows">
        {items?.map((d) => (
          <ListRow
            key={d.id}
            title={d.name ?? d.browser}
            detail={
              <>
                {d.browser} · added {fromNow(d.created_at)}
                {d.last_success_at ? ` · last sent ${fromNow(d.last_success_at)}` : ''}
              </>
            }
          >
            <div class="row">
              <RowAction verb="Test" of={d.name ?? d.browser} onClick={() => test(d)} />
              <RowAction verb="Remove" of={d.name ?? d.browser} onClick={() => remove(d)} />
            </div>
          </ListRow>
        ))}
      </ul>
      <EnablePushButton onEnabled={reload} />
      {(items?.length ?? 0) > 0 || testTapped() ? <TestNotification opens="settings" /> : null}
      <InstallSteps />
      {info.features.email && <EmailReminders />}
    </SettingsCard>
  )
}

/** "Email me questions that wait unanswered for N minutes." */
function EmailReminders() {
  const [minutes, setMinutes] = useState<string>('')
  useEffect(() => {
    client
      .emailReminderMinutes()
      .then((m) => setMinutes(m === null ? '' : String(m)))
      .catch(() => undefined)
  }, [])
  const [save, saving, saveError] = useAction(async () => {
    const value = minutes.trim() === '' ? null : Number(minutes)
    await client.setEmailReminderMinutes(value)
  })
  return (
    <Form class="stack" onSubmit={() => void save()}>
      <label>
        Email me questions that wait unanswered for{' '}
        <input
          type="number"
          min={1}
          inputMode="numeric"
          value={minutes}
          placeholder="never"
          onInput={(e) => setMinutes((e.target as HTMLInputElement).value)}
          aria-label="Minutes before an email reminder"
        />{' '}
        minutes
      </label>
      <ErrorNote error={saveError} />
      <Button busy={saving} onClick={() => save()}>
        Save
      </Button>
    </Form>
  )
}
