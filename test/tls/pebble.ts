// test-needs: pebble openssl
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkServerIdentity, connect, type PeerCertificate } from 'node:tls'
import type { Subprocess } from 'bun'
import { requireTool } from '../ops/release.ts'

/**
 * Let's Encrypt's ACME test server (Debian's `pebble`) on loopback, with `pebble-challtestsrv`
 * as its DNS server (every name answers 127.0.0.1, IPv4 only), so a real ACME order for any
 * name validates against the HTTP-01 port the test gives. Its own HTTPS uses a CA made here
 * (`directoryCa`); the certificates it issues chain to `root()`.
 */
export interface Pebble {
  directory: string
  /** The CA file of pebble's own HTTPS listener, for `--acme-ca`. */
  directoryCaFile: string
  /** The root that pebble's issued certificates chain to (PEM). */
  root(): Promise<string>
  /** How many certificates it has issued so far. */
  issued(): number
  /** Makes `host` resolve to `address` in pebble's DNS (a CA that cannot validate it). */
  pointHost(host: string, address: string): Promise<void>
  log(): string
  stop(): void
}

/** A port that was free a moment ago (pebble needs to know the validation port beforehand). */
export async function freePort(): Promise<number> {
  const socket = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = socket.port
  socket.stop(true)
  return port
}

/** Starts pebble and its DNS server; `httpPort` is where it checks HTTP-01 challenges. */
export async function startPebble(httpPort: number): Promise<Pebble> {
  const pebbleBin = requireTool('pebble', 'pebble')
  const dnsBin = requireTool('pebble-challtestsrv', 'pebble')
  const openssl = requireTool('openssl', 'openssl')
  const dir = mkdtempSync(join(tmpdir(), 'hark-pebble-'))
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
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
    keyFile,
    '-out',
    certFile,
    '-days',
    '2',
    '-subj',
    '/CN=pebble',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ])
  if (made.exitCode !== 0) throw new Error(`openssl: ${made.stderr.toString()}`)
  const [acmePort, managementPort, dnsPort, dnsManagementPort, tlsPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ])
  writeFileSync(
    join(dir, 'pebble.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: certFile,
        privateKey: keyFile,
        httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    }),
  )
  let output = ''
  const procs: Subprocess[] = []
  const keep = (proc: Subprocess<'ignore', 'pipe', 'pipe'>) => {
    procs.push(proc)
    const decoder = new TextDecoder()
    for (const stream of [proc.stdout, proc.stderr]) {
      void (async () => {
        for await (const chunk of stream) output += decoder.decode(chunk)
      })()
    }
  }
  keep(
    Bun.spawn(
      [
        dnsBin,
        '-defaultIPv6',
        '',
        '-dns01',
        `127.0.0.1:${dnsPort}`,
        '-http01',
        '',
        '-https01',
        '',
        '-tlsalpn01',
        '',
        '-management',
        `127.0.0.1:${dnsManagementPort}`,
      ],
      { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' },
    ),
  )
  keep(
    Bun.spawn(
      [pebbleBin, '-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`],
      {
        // No random sleeps, no rejected nonces: the test is about Hark, not pebble's chaos.
        env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
        stdout: 'pipe',
        stderr: 'pipe',
        stdin: 'ignore',
      },
    ),
  )
  const ca = readFileSync(certFile, 'utf8')
  const directory = `https://127.0.0.1:${acmePort}/dir`
  const stop = () => {
    for (const proc of procs) proc.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 15_000
  for (;;) {
    const up = await fetch(directory, { tls: { ca } }).then(
      (r) => r.ok,
      () => false,
    )
    const dnsUp = await fetch(`http://127.0.0.1:${dnsManagementPort}/`).then(
      () => true,
      () => false,
    )
    if (up && dnsUp) break
    if (Date.now() > deadline) {
      stop()
      throw new Error(`pebble did not start:\n${output}`)
    }
    await Bun.sleep(50)
  }
  return {
    directory,
    directoryCaFile: certFile,
    root: async () =>
      (await fetch(`https://127.0.0.1:${managementPort}/roots/0`, { tls: { ca } })).text(),
    issued: () => (output.match(/Issued certificate serial/g) ?? []).length,
    pointHost: async (host, address) => {
      const r = await fetch(`http://127.0.0.1:${dnsManagementPort}/add-a`, {
        method: 'POST',
        body: JSON.stringify({
          host: host.endsWith('.') ? host : `${host}.`,
          addresses: [address],
        }),
      })
      if (!r.ok) throw new Error(`add-a: ${r.status}`)
    },
    log: () => output,
    stop,
  }
}

/** The certificate a TLS server at 127.0.0.1:`port` shows for `name`, verified against `ca`. */
export function peerCertificate(port: number, name: string, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername: name,
      ca,
      checkServerIdentity: (_host, cert) => checkServerIdentity(name, cert),
    })
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate()
      socket.end()
      resolve(cert)
    })
    socket.once('error', reject)
    socket.setTimeout(10_000, () => socket.destroy(new Error('TLS handshake timed out')))
  })
}

/** `fetch` over HTTPS to 127.0.0.1 as if to `name`, trusting only `ca`. */
export function fetchAs(name: string, ca: string, url: string, init: RequestInit = {}) {
  return fetch(url, {
    ...init,
    tls: {
      ca,
      serverName: name,
      checkServerIdentity: (_host: string, cert: PeerCertificate) =>
        checkServerIdentity(name, cert),
    },
  })
}
