import { expect, test } from 'bun:test'
import { launchBrowser, loggedInContext, provision, startWebServer } from './harness.ts'

test('explore', async () => {
  const chrome = await launchBrowser()
  const server = await startWebServer()
  const p = provision(server)
  const context = await loggedInContext(chrome.browser, server, p.owner, { serviceWorkers: true })
  await context.grantPermissions(['notifications'], { origin: server.url })
  const page = await context.newPage()
  await page.goto(`${server.url}/settings`)
  await page.evaluate(async () => { await navigator.serviceWorker.ready })
  const workers = context.serviceWorkers()
  console.log('workers', workers.map((w) => w.url()))
  const sw = workers[0]!
  const r = await sw.evaluate(async () => {
    const out: Record<string, unknown> = {}
    out.ne = typeof NotificationEvent
    await (self as any).registration.showNotification('t', { body: 'b', tag: 'x', data: { url: '/x' } })
    const [n] = await (self as any).registration.getNotifications()
    out.n = !!n
    try {
      const ev = new (self as any).NotificationEvent('notificationclick', { notification: n, action: 'a0' })
      out.action = ev.action
      try { ev.waitUntil(Promise.resolve()) ; out.wu = 'ok' } catch (e) { out.wu = String(e) }
      const ev2 = new (self as any).NotificationEvent('notificationclick', { notification: n, action: 'a0' })
      let inner = ''
      self.addEventListener('notificationclick', (e: any) => { try { e.waitUntil(Promise.resolve()); inner = 'ok' } catch (x) { inner = String(x) } }, { once: true })
      self.dispatchEvent(ev2)
      out.inner = inner
      try { await (self as any).clients.openWindow('/c/x'); out.open = 'ok' } catch (e) { out.open = String(e) }
      const ws = await (self as any).clients.matchAll({ type: 'window', includeUncontrolled: true })
      out.windows = ws.map((w: any) => w.url)
      try { await ws[0].focus(); out.focus = 'ok' } catch (e) { out.focus = String(e) }
    } catch (e) { out.err = String(e) }
    return out
  })
  console.log(r)
  await context.close()
  await chrome.close()
  await server.stop()
}, 60000)
