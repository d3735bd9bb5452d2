import { useEffect, useState } from 'preact/hooks'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import { ApiError, del, enc, get, patch, post } from '../lib/api.ts'
import { fromNow } from '../lib/format.ts'
import { deviceName } from '../lib/passkey.ts'
import { useSession } from '../lib/session.ts'
import { useList } from './use-list.ts'

interface Device {
  id: string
  name: string | null
  browser: string
  created_at: number
  last_success_at: number | null
}

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
  if (!pushSupported()) throw new Error('This browser cannot receive notifications.')
  const permission = await Notification.requestPermission()
  if (permission !== 'granted') {
    throw new Error('Notifications are blocked for this site: allow them in the browser first.')
  }
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
    await post('/v1/app/push/subscriptions', { ...subscription.toJSON(), name })
  } catch (error) {
    // 409 on `endpoint`: this browser's endpoint is registered to another account (someone else
    // signed in here before); a new subscription has a new endpoint of its own. Any other 409
    // (the person has the most devices there can be) is theirs to read, not to retry.
    if (!(error instanceof ApiError) || error.status !== 409 || error.field !== 'endpoint') {
      throw error
    }
    await subscription.unsubscribe()
    await post('/v1/app/push/subscriptions', { ...(await subscribe()).toJSON(), name })
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
  const { items, error, reload } = useList<Device>('/v1/app/push/subscriptions', 'subscriptions')
  const [remove, , removeError] = useAction(async (d: Device) => {
    if (!confirm(`Stop notifications to “${d.name ?? d.browser}”?`)) return
    await del(`/v1/app/push/subscriptions/${enc(d.id)}`)
    await reload()
  })
  const [test, , testError] = useAction(async (d: Device) => {
    await post(`/v1/app/push/subscriptions/${enc(d.id)}/test`)
  })
  return (
    <section class="card stack" aria-labelledby="notifications">
      <h2 id="notifications">Notifications</h2>
      <ErrorNote error={error ?? removeError ?? testError} />
      {!pushSupported() && <p class="muted">This browser cannot receive notifications.</p>}
      {items?.length === 0 && <p class="muted">No device gets notifications yet.</p>}
      <ul class="rows">
        {items?.map((d) => (
          <li key={d.id}>
            <div>
              <strong>{d.name ?? d.browser}</strong>
              <span class="muted">
                {d.browser} · added {fromNow(d.created_at)}
                {d.last_success_at ? ` · last sent ${fromNow(d.last_success_at)}` : ''}
              </span>
            </div>
            <div class="row">
              <Button
                variant="quiet"
                onClick={() => test(d)}
                aria-label={`Test ${d.name ?? d.browser}`}
              >
                Test
              </Button>
              <Button
                variant="quiet"
                onClick={() => remove(d)}
                aria-label={`Remove ${d.name ?? d.browser}`}
              >
                Remove
              </Button>
            </div>
          </li>
        ))}
      </ul>
      <EnablePushButton onEnabled={reload} />
      {info.features.email && <EmailReminders />}
    </section>
  )
}

/** "Email me questions that wait unanswered for N minutes." */
function EmailReminders() {
  const [minutes, setMinutes] = useState<string>('')
  useEffect(() => {
    get<{ minutes: number | null }>('/v1/app/push/email-reminders')
      .then((r) => setMinutes(r.minutes === null ? '' : String(r.minutes)))
      .catch(() => undefined)
  }, [])
  const [save, saving, saveError] = useAction(async () => {
    const value = minutes.trim() === '' ? null : Number(minutes)
    await patch('/v1/app/push/email-reminders', { minutes: value })
  })
  return (
    <form
      class="stack"
      onSubmit={(e) => {
        e.preventDefault()
        void save()
      }}
    >
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
    </form>
  )
}
