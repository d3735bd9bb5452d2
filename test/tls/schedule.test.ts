// test-needs: openssl
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { OrderError } from '../../src/server/tls/acme.ts'
import {
  type Certificate,
  covers,
  DAY,
  readCertificate,
  renewalTime,
} from '../../src/server/tls/certificate.ts'
import { RETRY_DELAYS_MS, Renewal } from '../../src/server/tls/renewal.ts'
import { certificateFiles } from '../../src/server/tls/store.ts'
import { TestClock, tempDir } from '../harness.ts'
import { requireTool } from '../ops/release.ts'

// When `Renewal` orders, and what it does after a failure: the CA itself is a stand-in here
// (the real orders are in acme.test.ts and renewal.test.ts); the schedule is what is tested.

/** A real self-signed certificate for `names`, valid `days` from now. */
function certificate(names: string[], days: number): Certificate {
  const dir = tempDir('hark-schedule-')
  const made = Bun.spawnSync([
    requireTool('openssl', 'openssl'),
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    join(dir, 'k.pem'),
    '-out',
    join(dir, 'c.pem'),
    '-days',
    String(days),
    '-subj',
    `/CN=${names[0]}`,
    '-addext',
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
  ])
  if (made.exitCode !== 0) throw new Error(made.stderr.toString())
  return readCertificate(
    readFileSync(join(dir, 'c.pem'), 'utf8'),
    readFileSync(join(dir, 'k.pem'), 'utf8'),
  )
}

const quiet = () => {
  const lines: string[] = []
  const push = (level: string) => (m: string) => lines.push(`${level} ${m}`)
  return { lines, log: { info: push('info'), warn: push('warn'), error: push('error') } }
}

function renewal(options: {
  order: () => Promise<Certificate>
  clock?: TestClock
  saved?: Certificate
}) {
  const files = certificateFiles(tempDir('hark-schedule-data-'))
  if (options.saved) files.save(options.saved)
  const served: Certificate[] = []
  const { lines, log } = quiet()
  let orders = 0
  const r = new Renewal({
    names: ['hark.example.com'],
    files,
    clock: options.clock ?? new TestClock(),
    log,
    order: () => {
      orders++
      return options.order()
    },
    onCertificate: (c) => served.push(c),
  })
  return { r, files, served, lines, orders: () => orders }
}

describe('Renewal', () => {
  test('a saved certificate that serves the names is used as it is: no order', async () => {
    const saved = certificate(['hark.example.com'], 90)
    const { r, orders } = renewal({
      saved,
      order: () => Promise.reject(new Error('no order expected')),
    })
    expect(r.start()?.serial).toBe(saved.serial)
    expect(r.nextCheck).toBe(renewalTime(saved))
    r.stop()
    expect(orders()).toBe(0)
  })

  test('a saved certificate for other names, or past its end, is replaced by a new order', async () => {
    const fresh = certificate(['hark.example.com'], 90)
    for (const [saved, clock] of [
      [certificate(['old.example.com'], 90), new TestClock()],
      [certificate(['hark.example.com'], 1), new TestClock(Date.now() + 2 * DAY)],
    ] as const) {
      const { r, served, orders, files } = renewal({ saved, clock, order: async () => fresh })
      expect(r.start()).toBeUndefined()
      await r.renewNow()
      r.stop()
      expect(orders()).toBe(1)
      expect(served.map((c) => c.serial)).toEqual([fresh.serial])
      expect(files.load()?.serial).toBe(fresh.serial)
    }
  })

  test('failed orders wait longer each time, keep the certificate in use, and say so once each', async () => {
    const saved = certificate(['hark.example.com'], 90)
    const clock = new TestClock()
    const { r, lines, served } = renewal({
      saved,
      clock,
      order: () =>
        Promise.reject(
          new OrderError('cannot reach the ACME server at https://ca.example/dir (ECONNREFUSED)'),
        ),
    })
    r.start()
    for (const delay of RETRY_DELAYS_MS.slice(0, 3)) {
      await r.renewNow()
      expect(r.nextCheck).toBe(clock.now() + delay)
    }
    r.stop()
    const failures = lines.filter((l) => l.startsWith('error TLS: could not obtain'))
    expect(failures).toHaveLength(3)
    expect(failures[0]).toContain('(ECONNREFUSED); still serving the certificate valid until')
    expect(r.certificate?.serial).toBe(saved.serial)
    expect(served).toHaveLength(0)
  })

  test("the CA's Retry-After wins over a shorter wait", async () => {
    const clock = new TestClock()
    const later = clock.now() + 3 * 3600_000
    const { r, lines } = renewal({
      clock,
      order: () =>
        Promise.reject(new OrderError('the CA refused: too many certificates (HTTP 429)', later)),
    })
    r.start()
    await r.renewNow()
    r.stop()
    expect(r.nextCheck).toBe(later)
    expect(lines.at(-1)).toContain(
      `next try at ${new Date(later).toISOString().replace(/\.\d{3}Z$/, 'Z')}`,
    )
  })

  test('one order at a time: renewals asked for meanwhile join it', async () => {
    const fresh = certificate(['hark.example.com'], 90)
    let release!: (c: Certificate) => void
    const { r, orders, served } = renewal({
      order: () => new Promise((resolve) => (release = resolve)),
    })
    r.start()
    const asked = [r.renewNow(), r.renewNow(), r.renewNow()]
    release(fresh)
    await Promise.all(asked)
    r.stop()
    expect(orders()).toBe(1)
    expect(served).toHaveLength(1)
  })
})

describe('certificates', () => {
  test('renewal 30 days before the end, or at two thirds of a short lifetime', () => {
    const long = certificate(['hark.example.com'], 90)
    expect(renewalTime(long)).toBe(long.notAfter - 30 * DAY)
    const short = certificate(['hark.example.com'], 6)
    expect(renewalTime(short)).toBe(short.notAfter - (short.notAfter - short.notBefore) / 3)
  })

  test('names covered, a wildcard one label deep', () => {
    const c = certificate(['hark.example.com', '*.apps.example.com'], 2)
    expect(covers(c, 'HARK.example.com')).toBe(true)
    expect(covers(c, 'a.apps.example.com')).toBe(true)
    expect(covers(c, 'a.b.apps.example.com')).toBe(false)
    expect(covers(c, 'apps.example.com')).toBe(false)
    expect(covers(c, 'example.com')).toBe(false)
  })

  test("a key that is not the certificate's is refused", () => {
    const a = certificate(['a.example.com'], 2)
    const b = certificate(['b.example.com'], 2)
    expect(() => readCertificate(a.cert, b.key)).toThrow('does not belong')
    expect(() => readCertificate('garbage', a.key)).toThrow('no PEM certificate')
  })
})
