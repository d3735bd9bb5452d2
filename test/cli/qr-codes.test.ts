import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import jsQR from 'jsqr'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'

/**
 * Issue 27: the links that must reach a phone are printed as QR codes too. Each test runs the
 * real dist/hark (so the QR library is proved to be in the binary), takes the code it printed,
 * draws it as a bitmap and decodes that with an independent decoder (jsQR): it must give back
 * exactly the link printed beside it. "At a terminal" is a real pseudo-terminal (util-linux's
 * `script`), not a flag.
 */
const HARK = join(import.meta.dir, '..', '..', 'dist', 'hark')
const dirs: string[] = []
const PUBLIC = 'https://hark.example.com'
let server: TestServer

beforeAll(async () => {
  if (!existsSync(HARK)) throw new Error('dist/hark is missing: run `bun run build` first')
  server = await startTestServer({ listen: true })
  // Its links name the public address a phone opens; `hark init` talks to the loopback one.
  server.ctx.config.baseUrl = PUBLIC
})
afterAll(async () => {
  await server?.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function dataDir(): string {
  const d = tempDir('hark-qr-')
  dirs.push(d)
  return d
}

/** The environment of a run: none of the tester's Hark settings, its own home. */
function env(): Record<string, string> {
  const base: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('HARK_')) base[k] = v
  }
  const home = dataDir()
  return { ...base, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), TERM: 'xterm' }
}

const ON = '\x1b[30;107m'

/**
 * The QR code in a terminal's output, decoded: each text line of the code is two rows of
 * modules (half blocks), drawn 4 pixels a module on white with a wide margin.
 */
function decodePrinted(output: string): string | undefined {
  const rows: boolean[][] = []
  for (const raw of output.split(/\r?\n/)) {
    if (!raw.includes(ON)) continue
    const text = raw.replaceAll(ON, '').replaceAll('\x1b[0m', '')
    const top = [...text].map((ch) => ch === '█' || ch === '▀')
    const bottom = [...text].map((ch) => ch === '█' || ch === '▄')
    rows.push(top, bottom)
  }
  if (rows.length === 0) return undefined
  const scale = 4
  const margin = 16
  const size = (rows[0]?.length ?? 0) * scale + 2 * margin
  const height = rows.length * scale + 2 * margin
  const pixels = new Uint8ClampedArray(size * height * 4).fill(255)
  rows.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (!dark) return
      for (let dy = 0; dy < scale; dy++) {
        for (let dx = 0; dx < scale; dx++) {
          const i = ((margin + y * scale + dy) * size + margin + x * scale + dx) * 4
          pixels[i] = pixels[i + 1] = pixels[i + 2] = 0
        }
      }
    })
  })
  return jsQR(pixels, size, height)?.data
}

/** Runs `hark ...args` at a pseudo-terminal until `done` matches what it printed, then stops it. */
async function atTerminal(args: string[], done: RegExp): Promise<string> {
  // `exec`: hark is script's child itself, so script's SIGTERM reaches it whatever the shell.
  const command = `exec ${[HARK, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')}`
  const proc = Bun.spawn(['script', '-qfec', command, '/dev/null'], {
    env: env(),
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const decoder = new TextDecoder()
  const reader = proc.stdout.getReader()
  try {
    while (!done.test(out)) {
      const { value, done: ended } = await reader.read()
      if (ended) break
      out += decoder.decode(value)
    }
  } finally {
    reader.releaseLock()
    proc.kill('SIGTERM')
    await proc.exited
  }
  return out
}

async function piped(args: string[]) {
  const proc = Bun.spawn([HARK, ...args], { env: env(), stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { stdout, stderr, code }
}

describe('QR codes of the links that must reach a phone', () => {
  test('hark serve at a terminal prints the setup link as a QR code that decodes to it', async () => {
    const data = dataDir()
    const out = await atTerminal(
      [
        'serve',
        '--data',
        data,
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--base-url',
        'https://hark.example.com',
      ],
      /or, headless: hark admin user add/,
    )
    const link = readFileSync(join(data, 'setup-token'), 'utf8').trim()
    expect(link).toMatch(/^https:\/\/hark\.example\.com\/setup#token=\w+$/)
    expect(out).toContain(`open ${link} within an hour`)
    expect(decodePrinted(out)).toBe(link)
  }, 30_000)

  test('hark serve on localhost: no QR code a phone could not open, but what would work', async () => {
    const data = dataDir()
    const out = await atTerminal(
      ['serve', '--data', data, '--host', '127.0.0.1', '--port', '0'],
      /or, headless: hark admin user add/,
    )
    const link = readFileSync(join(data, 'setup-token'), 'utf8').trim()
    expect(link).toMatch(/^http:\/\/localhost:\d+\/setup#token=\w+$/)
    expect(out).toContain(`open ${link} within an hour`)
    expect(out).not.toContain(ON)
    expect(out).toContain('to set up from a phone, give Hark an address it can reach over HTTPS')
  }, 30_000)

  test('hark admin user add at a terminal: a QR code of the sign-in link, the link still last', async () => {
    const data = dataDir()
    const out = await atTerminal(
      [
        'admin',
        'user',
        'add',
        'pat@example.com',
        '--owner',
        '--data',
        data,
        '--base-url',
        'https://hark.example.com',
      ],
      /enrol#\w{32}\r?\n/,
    )
    const link = /https:\/\/hark\.example\.com\/enrol#\w{32}/.exec(out)?.[0]
    expect(link).toBeDefined()
    expect(decodePrinted(out)).toBe(link)
  }, 30_000)

  test('hark admin user add at a terminal with a localhost base URL: the note, no QR code', async () => {
    const data = dataDir()
    const out = await atTerminal(
      ['admin', 'user', 'add', 'lo@example.com', '--data', data],
      /enrol#\w{32}\r?\n/,
    )
    expect(out).toContain('Note: the link uses http://localhost')
    expect(out).not.toContain(ON)
  }, 30_000)

  test('hark admin user add in a pipe prints no QR code, unless --qr; the link is the last line', async () => {
    const data = dataDir()
    const base = ['admin', 'user', 'add', '--data', data, '--base-url', 'https://hark.example.com']
    const plain = await piped([...base, 'a@example.com'])
    expect(plain.code).toBe(0)
    expect(plain.stdout).not.toContain(ON)
    const asked = await piped([...base, 'b@example.com', '--qr'])
    expect(asked.code).toBe(0)
    const last = asked.stdout.trimEnd().split('\n').at(-1) as string
    expect(last).toMatch(/^https:\/\/hark\.example\.com\/enrol#\w{32}$/)
    expect(decodePrinted(asked.stdout)).toBe(last)
  }, 30_000)

  test('hark admin user link --qr: the new sign-in link as a QR code', async () => {
    const data = dataDir()
    const base = ['--data', data, '--base-url', 'https://hark.example.com']
    expect((await piped(['admin', 'user', 'add', 'c@example.com', ...base])).code).toBe(0)
    const r = await piped(['admin', 'user', 'link', 'c@example.com', '--qr', ...base])
    expect(r.code).toBe(0)
    const last = r.stdout.trimEnd().split('\n').at(-1) as string
    expect(last).toMatch(/^https:\/\/hark\.example\.com\/enrol#\w{32}$/)
    expect(decodePrinted(r.stdout)).toBe(last)
    // --no-qr wins even at a terminal.
    const none = await atTerminal(
      ['admin', 'user', 'link', 'c@example.com', '--no-qr', ...base],
      /enrol#\w{32}\r?\n/,
    )
    expect(none).not.toContain(ON)
  }, 30_000)

  test('hark init at a terminal prints its pairing link as a QR code that decodes to it', async () => {
    const out = await atTerminal(['init', server.url, '--label', 'QR'], /Waiting for approval/)
    const link = /(https:\/\/\S+\/pair\S*)/.exec(out)?.[1]
    expect(link).toStartWith(`${PUBLIC}/pair?code=`)
    expect(decodePrinted(out)).toBe(link)
  }, 30_000)

  test('hark init in a pipe prints its link without a QR code unless --qr', async () => {
    const run = async (extra: string[]) => {
      const proc = Bun.spawn([HARK, 'init', server.url, ...extra], {
        env: env(),
        stdout: 'pipe',
        stderr: 'pipe',
      })
      let err = ''
      const decoder = new TextDecoder()
      for await (const chunk of proc.stderr) {
        err += decoder.decode(chunk)
        if (/Waiting for approval/.test(err)) break
      }
      proc.kill('SIGTERM')
      await proc.exited
      return err
    }
    expect(await run([])).not.toContain(ON)
    const asked = await run(['--qr'])
    const link = /(https:\/\/\S+\/pair\S*)/.exec(asked)?.[1]
    expect(link).toStartWith(`${PUBLIC}/pair?code=`)
    expect(decodePrinted(asked)).toBe(link)
  }, 30_000)
})
