// test-needs: nginx caddy openssl
// (the shipped proxy configs in front of dist/hark. See scripts/test-parts.ts.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { provisionAgents, requireBinary, type Served, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'
import { requireTool } from './release.ts'

/**
 * The shipped proxy configs (deploy/nginx.conf, deploy/Caddyfile) with Debian's real nginx and
 * Caddy in front of the compiled `dist/hark`: each passes its own config check as shipped, then
 * carries a long-poll held the full 55 s, a poll woken half-way, and a 20 MB upload; Hark sees
 * the client's address through the proxy. Only the certificate paths, ports and the site name
 * are changed for the run (no public name, no ACME here).
 */
const REPO = join(import.meta.dir, '..', '..')
const work = tempDir('hark-proxies-')
let hark: Served
let token = ''
/** A second channel nobody writes to: its polls run their whole wait. */
let quietToken = ''
const procs: Subprocess[] = []

const freePort = () => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port as number
  s.stop(true)
  return port
}

async function waitFor(url: string, init: RequestInit & { tls?: object } = {}) {
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(url, init)
      if (r.status === 200) return
    } catch {}
    await Bun.sleep(25)
  }
  throw new Error(`${url} did not answer 200`)
}

const run = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  return { code: r.exitCode, out: `${r.stdout.toString()}${r.stderr.toString()}` }
}

/** The site config as shipped, with this run's certificate and key. */
function nginxSite(cert: string, key: string): string {
  return readFileSync(join(REPO, 'deploy/nginx.conf'), 'utf8')
    .replace('/etc/letsencrypt/live/hark.example.com/fullchain.pem', cert)
    .replace('/etc/letsencrypt/live/hark.example.com/privkey.pem', key)
}

function nginxMain(dir: string, site: string): string {
  writeFileSync(join(dir, 'site.conf'), site)
  const main = join(dir, 'nginx.conf')
  writeFileSync(
    main,
    `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  include ${dir}/site.conf;\n}\n`,
  )
  return main
}

const proxied: Record<'nginx' | 'caddy', string> = { nginx: '', caddy: '' }
const tls = { rejectUnauthorized: false }

beforeAll(async () => {
  requireBinary()
  const nginx = requireTool('nginx', 'nginx')
  const caddy = requireTool('caddy', 'caddy')
  const data = join(work, 'data')
  mkdirSync(data)
  const [proxyBot, quietBot] = await provisionAgents(data, 'ops@example.com', [
    'Proxy bot',
    'Quiet bot',
  ])
  token = proxyBot.token
  quietToken = quietBot.token
  hark = await startServe(['--data', data, '--trust-proxy', '--write-limit', '0'])
  const upstream = new URL(hark.url).port

  // nginx: TLS on a free port, the shipped server block otherwise.
  const ndir = join(work, 'nginx')
  mkdirSync(ndir)
  run([
    'openssl',
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
    '-keyout',
    join(ndir, 'key.pem'),
    '-out',
    join(ndir, 'cert.pem'),
  ])
  const nport = freePort()
  const site = nginxSite(join(ndir, 'cert.pem'), join(ndir, 'key.pem'))
    .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${upstream};`)
    .replace(/listen 443 ssl http2;/, `listen 127.0.0.1:${nport} ssl http2;`)
    .replace(/listen 80;/, `listen 127.0.0.1:${freePort()};`)
    // IPv6 may be off where this runs; the IPv4 listeners carry the test.
    .replace(/\n\s*listen \[::\]:\d+[^;]*;/g, '')
  const nconf = nginxMain(ndir, site)
  procs.push(Bun.spawn([nginx, '-c', nconf, '-p', ndir, '-g', 'daemon off;'], { stderr: 'pipe' }))
  proxied.nginx = `https://localhost:${nport}`

  // Caddy: the shipped site block on plain http at a free port, no admin endpoint.
  const cdir = join(work, 'caddy')
  mkdirSync(cdir)
  const cport = freePort()
  const caddyfile = `{\n\tadmin off\n\tauto_https off\n}\n${readFileSync(
    join(REPO, 'deploy/Caddyfile'),
    'utf8',
  )
    .replace('hark.example.com {', `http://localhost:${cport} {`)
    .replace('reverse_proxy 127.0.0.1:8080', `reverse_proxy 127.0.0.1:${upstream}`)}`
  writeFileSync(join(cdir, 'Caddyfile'), caddyfile)
  procs.push(
    Bun.spawn([caddy, 'run', '--adapter', 'caddyfile', '--config', join(cdir, 'Caddyfile')], {
      stderr: 'pipe',
      env: { ...process.env, HOME: cdir, XDG_DATA_HOME: cdir, XDG_CONFIG_HOME: cdir },
    }),
  )
  proxied.caddy = `http://localhost:${cport}`
  await waitFor(`${proxied.nginx}/health`, { tls } as RequestInit)
  await waitFor(`${proxied.caddy}/health`)
}, 30_000)

afterAll(async () => {
  for (const p of procs) p.kill('SIGTERM')
  await Promise.all(procs.map((p) => p.exited))
  hark?.proc.kill('SIGTERM')
  await hark?.proc.exited
  rmSync(work, { recursive: true, force: true })
})

const auth = () => ({ authorization: `Bearer ${token}` })
const via = (name: 'nginx' | 'caddy', path: string, init: RequestInit = {}) =>
  fetch(`${proxied[name]}${path}`, { ...init, tls } as RequestInit)

describe('the shipped configs pass their own checks', () => {
  test('nginx -t on deploy/nginx.conf as shipped (Debian nginx)', () => {
    const dir = join(work, 'nginx-check')
    mkdirSync(dir, { recursive: true })
    const cert = join(work, 'nginx', 'cert.pem')
    const key = join(work, 'nginx', 'key.pem')
    const main = nginxMain(dir, nginxSite(cert, key))
    const r = run(['nginx', '-t', '-c', main, '-p', dir])
    expect({ code: r.code, out: r.out }).toMatchObject({ code: 0 })
    expect(r.out).toContain('test is successful')
  })

  test('caddy validate on deploy/Caddyfile as shipped (Debian Caddy)', () => {
    const r = run([
      'caddy',
      'validate',
      '--adapter',
      'caddyfile',
      '--config',
      join(REPO, 'deploy/Caddyfile'),
    ])
    expect({ code: r.code, out: r.out.slice(-400) }).toMatchObject({ code: 0 })
    expect(r.out).toContain('Valid configuration')
  })
})

describe('through nginx and Caddy', () => {
  test('a long-poll is held the full 55 s and answered, not cut; one woken half-way gets the message', async () => {
    const started = performance.now()
    const poll = (name: 'nginx' | 'caddy', key: string, since: number) =>
      via(name, `/v1/messages?since=${since}&wait=55`, {
        headers: { authorization: `Bearer ${key}` },
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { messages: { body: { text?: string } }[] },
        seconds: (performance.now() - started) / 1000,
      }))
    const cursorOf = async (key: string) =>
      (
        (await (
          await fetch(`${hark.url}/v1/messages?since=0&limit=200`, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).json()) as { cursor: number }
      ).cursor
    const quiet = await cursorOf(quietToken)
    const busy = await cursorOf(token)
    const held = [poll('nginx', quietToken, quiet), poll('caddy', quietToken, quiet)]
    const woken = [poll('nginx', token, busy), poll('caddy', token, busy)]
    await Bun.sleep(20_000)
    // A send through one proxy wakes the polls held through both.
    const sent = await via('caddy', '/v1/messages', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ body: { text: 'half-way' } }),
    })
    expect(sent.status).toBe(200)
    for (const w of await Promise.all(woken)) {
      expect(w.status).toBe(200)
      expect(w.body.messages.map((m) => m.body.text)).toEqual(['half-way'])
      expect(w.seconds).toBeLessThan(40)
    }
    for (const h of await Promise.all(held)) {
      expect(h.status).toBe(200)
      expect(h.body.messages).toEqual([])
      expect(h.seconds).toBeGreaterThan(54)
    }
  }, 90_000)

  test('a 20 MB upload streams through and arrives whole', async () => {
    const bytes = randomBytes(20 * 1024 * 1024)
    const sha = createHash('sha256').update(bytes).digest('hex')
    for (const name of ['nginx', 'caddy'] as const) {
      const r = await via(name, `/v1/files?name=${name}.bin`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/octet-stream' },
        body: bytes,
      })
      expect(r.status).toBe(200)
      const file = (await r.json()) as { file_id: string; size: number; sha256?: string }
      expect(file.size).toBe(bytes.length)
      const back = await fetch(`${hark.url}/v1/files/${file.file_id}`, { headers: auth() })
      expect(
        createHash('sha256')
          .update(new Uint8Array(await back.arrayBuffer()))
          .digest('hex'),
      ).toBe(sha)
    }
  }, 60_000)

  test("Hark logs the client's address the proxy saw, not a spoofed one", async () => {
    await via('nginx', '/health?n', { headers: { 'x-forwarded-for': '6.6.6.6' } })
    await via('caddy', '/health?c', { headers: { 'x-forwarded-for': '6.6.6.6' } })
    const lines = hark
      .log()
      .split('\n')
      .filter((l) => l.includes('GET /health 200'))
    expect(lines.length).toBeGreaterThanOrEqual(2)
    for (const l of lines.slice(-2)) {
      // The test's own address as each proxy saw it (localhost: IPv4 or IPv6), never the claim.
      expect(l).toMatch(/ (127\.0\.0\.1|::1) GET \/health 200 /)
      expect(l).not.toContain('6.6.6.6')
    }
  })
})
