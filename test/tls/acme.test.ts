import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { requireBinary } from '../binary/process.ts'
import { tempDir } from '../harness.ts'
import { fetchAs, freePort, type Pebble, peerCertificate, startPebble } from './pebble.ts'
import { type HarkProcess, spawnHark } from './serve.ts'

// `hark serve --domain` against Debian's pebble (Let's Encrypt's ACME test server) on loopback:
// a real ACME order, HTTP-01 validated by pebble on the port Hark listens on, the certificate
// checked against pebble's own root.

let pebble: Pebble
let root: string
let httpPort: number
let httpsPort: number
const dir = tempDir('hark-acme-')
const running: HarkProcess[] = []

const serveDomain = (name: string, data = dir, directory = pebble.directory) => {
  const hark = spawnHark([
    '--data',
    data,
    '--host',
    '127.0.0.1',
    '--port',
    String(httpsPort),
    '--http-port',
    String(httpPort),
    '--domain',
    name,
    '--acme-directory',
    directory,
    '--acme-ca',
    pebble.directoryCaFile,
    '--acme-email',
    'ops@example.com',
  ])
  running.push(hark)
  return hark
}

beforeAll(async () => {
  requireBinary()
  httpPort = await freePort()
  httpsPort = await freePort()
  pebble = await startPebble(httpPort)
  root = await pebble.root()
})

afterAll(async () => {
  await Promise.all(running.map((h) => h.stop()))
  pebble?.stop()
})

describe('hark serve --domain', () => {
  test('obtains a certificate from the CA and serves the API over HTTPS with it', async () => {
    const hark = serveDomain('hark.test')
    await hark.until(/obtained a certificate for hark\.test/)
    await hark.until(/hark listening on/)
    const health = await fetchAs('hark.test', root, `https://127.0.0.1:${httpsPort}/health`)
    expect(health.status).toBe(200)
    const cert = await peerCertificate(httpsPort, 'hark.test', root)
    expect(cert.subjectaltname).toBe('DNS:hark.test')
    expect(pebble.issued()).toBe(1)
    // The base URL is the domain's, over https, by itself.
    expect(hark.log()).toContain(`base URL https://hark.test:${httpsPort}`)
    // Kept in DATA/tls, readable by the service user alone.
    expect(statSync(join(dir, 'tls')).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'tls', 'certificate.pem')).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, 'tls', 'acme-account.key')).mode & 0o777).toBe(0o600)
  })

  test('port 80 redirects to https and answers only the challenges it holds', async () => {
    const redirect = await fetch(`http://127.0.0.1:${httpPort}/v1/info?x=1`, {
      headers: { host: 'hark.test' },
      redirect: 'manual',
    })
    expect(redirect.status).toBe(308)
    expect(redirect.headers.get('location')).toBe(`https://hark.test:${httpsPort}/v1/info?x=1`)
    // A Host that is not ours is not echoed back: the redirect goes to our own name.
    const foreign = await fetch(`http://127.0.0.1:${httpPort}/`, {
      headers: { host: 'evil.example' },
      redirect: 'manual',
    })
    expect(foreign.headers.get('location')).toBe(`https://hark.test:${httpsPort}/`)
    const unknown = await fetch(`http://127.0.0.1:${httpPort}/.well-known/acme-challenge/nope`)
    expect(unknown.status).toBe(404)
  })

  test('a restart serves the saved certificate and orders none', async () => {
    const first = await peerCertificate(httpsPort, 'hark.test', root)
    await running[0]?.stop()
    const hark = serveDomain('hark.test')
    await hark.until(/hark listening on/)
    expect(hark.log()).toContain('using the certificate for hark.test')
    expect(hark.log()).not.toContain('ordering')
    const again = await peerCertificate(httpsPort, 'hark.test', root)
    expect(again.serialNumber).toBe(first.serialNumber)
    expect(pebble.issued()).toBe(1)
    await hark.stop()
  })

  test('an unreachable CA is one clear log line, port 80 says why, and the server stays up', async () => {
    const closed = await freePort()
    const directory = `https://127.0.0.1:${closed}/dir`
    const hark = serveDomain('fresh.test', tempDir('hark-acme-'), directory)
    try {
      const line = await hark.until(
        /error TLS: could not obtain a certificate for fresh\.test: (.*)/,
      )
      expect(line[1]).toContain(`cannot reach the ACME server at ${directory} (ECONNREFUSED)`)
      expect(line[1]).toContain('HTTPS waits until one is obtained; next try at')
      const waiting = await fetch(`http://127.0.0.1:${httpPort}/`)
      expect(waiting.status).toBe(503)
      expect((await waiting.json()).error).toContain('obtaining its HTTPS certificate')
      expect(hark.proc.exitCode).toBeNull()
      // One failed order, then it waits: no loop.
      await Bun.sleep(500)
      expect(hark.log().match(/could not obtain/g)?.length).toBe(1)
    } finally {
      await hark.stop()
    }
  })

  test('a CA that refuses the order (its validation fails) is a clear log line', async () => {
    // pebble's DNS sends the CA to an address where nothing answers the challenge.
    await pebble.pointHost('unreachable.test', '127.0.0.2')
    const hark = serveDomain('unreachable.test', tempDir('hark-acme-'))
    try {
      const line = await hark.until(
        /error TLS: could not obtain a certificate for unreachable\.test: (.*)/,
      )
      expect(line[1]).toContain('the CA refused:')
      expect(line[1]).toContain('next try at')
      expect(hark.proc.exitCode).toBeNull()
    } finally {
      await hark.stop()
    }
  })
})
