import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DEFAULTS } from '../../src/core/config.ts'
import { createContext } from '../../src/server/context.ts'
import { type RunningHttps, startHttps } from '../../src/server/https.ts'
import { startTestServer, tempDir, until } from '../harness.ts'
import { fetchAs, freePort, type Pebble, peerCertificate, startPebble } from './pebble.ts'

// A renewal forced while the server is busy: the certificate is swapped into the running
// server (a new listener on the same port), a 55 s long-poll held on the old one stays held
// and is answered, and a CA gone at renewal time leaves the old certificate served. In
// process (the test forces the renewal through `renewal.renewNow()`); the ACME order is real.

let pebble: Pebble
let root: string
let running: RunningHttps
let httpsPort: number
let token: string
const lines: string[] = []
const log = {
  info: (m: string) => lines.push(`info ${m}`),
  warn: (m: string) => lines.push(`warn ${m}`),
  error: (m: string) => lines.push(`error ${m}`),
}

const api = (path: string, init: RequestInit = {}) =>
  fetchAs('hark.test', root, `https://127.0.0.1:${httpsPort}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  })

beforeAll(async () => {
  const httpPort = await freePort()
  httpsPort = await freePort()
  pebble = await startPebble(httpPort)
  root = await pebble.root()
  // An owner and a channel, as `hark admin` makes them, in a data directory of its own.
  const provisioned = await startTestServer({ dataDir: tempDir('hark-renewal-') })
  token = provisioned.agentToken
  const dataDir = provisioned.dir
  await provisioned.stop()
  const ctx = await createContext(
    {
      ...DEFAULTS,
      dataDir,
      host: '127.0.0.1',
      port: httpsPort,
      httpPort,
      baseUrl: `https://hark.test:${httpsPort}`,
      writeLimit: 0,
      domains: ['hark.test'],
      acmeDirectory: pebble.directory,
      acmeCa: pebble.directoryCaFile,
      // The replaced listener drains briefly here, so new connections soon reach only the new one.
      tlsDrainMs: 300,
      metrics: true,
    },
    { log },
  )
  running = await startHttps(ctx)
  await running.ready
})

afterAll(async () => {
  await running?.stop()
  pebble?.stop()
})

/** The certificate new connections get, once it is not `serial` (bounded: 10 s). */
async function servedOtherThan(serial: string) {
  const deadline = Date.now() + 10_000
  for (;;) {
    const cert = await peerCertificate(httpsPort, 'hark.test', root)
    if (cert.serialNumber !== serial) return cert
    if (Date.now() > deadline) throw new Error(`still serving ${serial}`)
    await Bun.sleep(50)
  }
}

describe('renewal of a --domain certificate', () => {
  test('a forced renewal swaps the certificate while a 55 s long-poll stays held, then answered', async () => {
    const first = await peerCertificate(httpsPort, 'hark.test', root)
    const { cursor } = (await (await api('/v1/messages?since=0')).json()) as { cursor: number }
    const waitersBefore = running.ctx.waiters.size
    const held = api(`/v1/messages?since=${cursor}&wait=55`)
    await until(() => running.ctx.waiters.size > waitersBefore, 10_000)

    await running.renewal?.renewNow()
    const second = await servedOtherThan(first.serialNumber)
    expect(pebble.issued()).toBe(2)
    expect(lines.some((l) => l.includes(`serial ${second.serialNumber.toLowerCase()}`))).toBe(true)

    // The poll is still held on the first listener; a send through the new one answers it.
    const sent = await api('/v1/messages', {
      method: 'POST',
      body: JSON.stringify({ body: { title: 'after the renewal' } }),
    })
    expect(sent.status).toBe(200)
    const answered = await held
    expect(answered.status).toBe(200)
    const page = (await answered.json()) as { messages: { body: { title: string } }[] }
    expect(page.messages.map((m) => m.body.title)).toEqual(['after the renewal'])
  })

  test('a CA gone at renewal time is one log line, and the certificate in use stays served', async () => {
    await running.whenDrained()
    const served = await peerCertificate(httpsPort, 'hark.test', root)
    pebble.stop()
    const before = lines.length
    await running.renewal?.renewNow()
    const failure = lines.slice(before).find((l) => l.startsWith('error TLS: could not obtain'))
    expect(failure).toContain('cannot reach the ACME server')
    expect(failure).toContain('still serving the certificate valid until')
    expect(failure).toContain('next try at')
    const still = await peerCertificate(httpsPort, 'hark.test', root)
    expect(still.serialNumber).toBe(served.serialNumber)
    expect((await api('/health')).status).toBe(200)
  })

  test('/metrics shows when the certificate served now ends', async () => {
    const text = await (await api('/metrics')).text()
    const notAfter = running.renewal?.certificate?.notAfter as number
    expect(text).toContain(`hark_tls_certificate_not_after_seconds ${notAfter / 1000}`)
  })
})
