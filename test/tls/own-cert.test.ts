// test-needs: openssl
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { requireBinary, run } from '../binary/process.ts'
import { tempDir } from '../harness.ts'
import { requireTool } from '../ops/release.ts'
import { fetchAs, freePort, peerCertificate } from './pebble.ts'
import { type HarkProcess, spawnHark } from './serve.ts'

// `hark serve --tls-cert --tls-key` (dist/hark): the operator's own certificate, served, then
// replaced on disk (a rename, as certbot and Kubernetes do) and picked up without a restart;
// SIGHUP reloads at once; a half-written or mismatched pair keeps the certificate in use.

const work = tempDir('hark-own-cert-')
let ca: string
let port: number
let httpPort: number
let hark: HarkProcess
const certFile = join(work, 'live.crt')
const keyFile = join(work, 'live.key')

/** A leaf for hark.test signed by the test CA: its chain and key files. */
function leaf(name: string): { cert: string; key: string } {
  const openssl = requireTool('openssl', 'openssl')
  const key = join(work, `${name}.key`)
  const csr = join(work, `${name}.csr`)
  const cert = join(work, `${name}.crt`)
  const ext = join(work, `${name}.ext`)
  writeFileSync(ext, 'subjectAltName=DNS:hark.test\n')
  const steps = [
    [
      openssl,
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/CN=${name}`,
    ],
    [
      openssl,
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      join(work, 'ca.crt'),
      '-CAkey',
      join(work, 'ca.key'),
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      '2',
      '-extfile',
      ext,
    ],
  ]
  for (const step of steps) {
    const done = Bun.spawnSync(step)
    if (done.exitCode !== 0) throw new Error(`${step.join(' ')}: ${done.stderr}`)
  }
  return { cert, key }
}

/** Puts a pair in place the way certbot does: written beside, then renamed over. */
function install(pair: { cert: string; key: string }) {
  for (const [from, to] of [
    [pair.key, keyFile],
    [pair.cert, certFile],
  ] as const) {
    writeFileSync(`${to}.new`, readFileSync(from))
    renameSync(`${to}.new`, to)
  }
}

const served = async () => (await peerCertificate(port, 'hark.test', ca)).subject.CN

/**
 * Waits until new connections get the certificate named `cn`: a replaced listener keeps
 * taking some new connections while it drains (10 s, src/server/tls/listener.ts).
 */
async function untilServed(cn: string) {
  const deadline = Date.now() + 20_000
  for (;;) {
    if ((await served()) === cn) return
    if (Date.now() > deadline) throw new Error(`${cn} is not served`)
    await Bun.sleep(100)
  }
}

beforeAll(async () => {
  requireBinary()
  const openssl = requireTool('openssl', 'openssl')
  const made = Bun.spawnSync([
    openssl,
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    join(work, 'ca.key'),
    '-out',
    join(work, 'ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=Test CA',
  ])
  if (made.exitCode !== 0) throw new Error(made.stderr.toString())
  ca = await Bun.file(join(work, 'ca.crt')).text()
  install(leaf('first'))
  port = await freePort()
  httpPort = await freePort()
  hark = spawnHark([
    '--data',
    join(work, 'data'),
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--http-port',
    String(httpPort),
    '--tls-cert',
    certFile,
    '--tls-key',
    keyFile,
    '--base-url',
    `https://hark.test:${port}`,
  ])
  await hark.until(/hark listening on/)
})

afterAll(async () => {
  await hark?.stop()
})

describe('hark serve --tls-cert', () => {
  test('serves the API over HTTPS with the given certificate, and redirects plain HTTP', async () => {
    expect(await served()).toBe('first')
    expect((await fetchAs('hark.test', ca, `https://127.0.0.1:${port}/health`)).status).toBe(200)
    const redirect = await fetch(`http://127.0.0.1:${httpPort}/app?x=1`, { redirect: 'manual' })
    expect(redirect.status).toBe(308)
    expect(redirect.headers.get('location')).toBe(`https://hark.test:${port}/app?x=1`)
  })

  test('a certificate replaced on disk is served without a restart', async () => {
    install(leaf('second'))
    await hark.until(/changed: serving the certificate in .*live\.crt/, 20_000)
    await untilServed('second')
  })

  test('a key that does not match is refused with a log line, and the certificate in use stays', async () => {
    const third = leaf('third')
    const fourth = leaf('fourth')
    install({ cert: third.cert, key: fourth.key })
    hark.proc.kill('SIGHUP')
    const line = await hark.until(/SIGHUP: cannot use .*: (.*)/)
    expect(line[1]).toContain('the private key does not belong to the certificate')
    expect(line[1]).toContain('still serving serial')
    // Never the refused pair (a listener of an earlier certificate may still be draining).
    for (let i = 0; i < 5; i++) expect(['first', 'second']).toContain((await served()) as string)
    expect(hark.proc.exitCode).toBeNull()
  })

  test('SIGHUP reloads at once', async () => {
    install(leaf('fifth'))
    hark.proc.kill('SIGHUP')
    await hark.until(/SIGHUP: serving the certificate/)
    await untilServed('fifth')
  })

  test('a certificate file that cannot be used stops the start with its reason', async () => {
    const missing = await run([
      'serve',
      '--data',
      join(work, 'other'),
      '--port',
      '0',
      '--tls-cert',
      join(work, 'nope.crt'),
      '--tls-key',
      keyFile,
    ])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`cannot use --tls-cert ${join(work, 'nope.crt')}: cannot read`)
    const alone = await run(['serve', '--data', join(work, 'other'), '--tls-cert', certFile])
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain('--tls-cert and --tls-key go together')
  })
})
