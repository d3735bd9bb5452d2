import { afterEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { FileInfo } from '../../src/files/schema.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

/** Every regular file under `dir`, recursively (dot-directories such as `.tmp` included). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(path))
    else out.push(path)
  }
  return out
}

const fileRows = () => (s.ctx.db.query('SELECT count(*) AS n FROM files').get() as { n: number }).n

/** Bytes 0..255 repeated: not text, so any re-encoding would show. */
function binary(size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size)
  for (let i = 0; i < size; i++) out[i] = (i * 7 + 3) % 256
  return out
}

/** A body with no Content-Length: chunks of `chunk` bytes until `total` bytes have gone. */
function streamOf(total: number, chunk = 256): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close()
      const n = Math.min(chunk, total - sent)
      controller.enqueue(binary(n))
      sent += n
    },
  })
}

/** Uploads with the agent's token through the raw transport, for bodies the client can't make. */
const rawUpload = (
  name: string | undefined,
  body: BodyInit | null,
  headers: Record<string, string> = { 'content-type': 'application/octet-stream' },
) => s.agent.raw('POST', '/v1/files', { query: { name }, body: body ?? undefined, headers })

describe('POST /v1/files', () => {
  test('uploads raw bytes: { file_id, name, mime, size }', async () => {
    s = await startTestServer()
    const bytes = binary(3000)
    const info = await s.agent.upload('report.bin', bytes, 'application/octet-stream')
    expect(typeof info.file_id).toBe('string')
    expect(info.name).toBe('report.bin')
    expect(info.mime).toBe('application/octet-stream')
    expect(info.size).toBe(3000)
    expect(fileRows()).toBe(1)
    // Stored on disk under files/<channel>/<file>, nothing left in .tmp.
    const stored = filesUnder(join(s.dir, 'files'))
    expect(stored).toEqual([join(s.dir, 'files', s.channelId, info.file_id)])
  })

  test('the mime is the Content-Type without parameters, lower-cased', async () => {
    s = await startTestServer()
    const info = await s.agent.upload('a.txt', 'hello', 'Text/Plain; charset=UTF-8')
    expect(info.mime).toBe('text/plain')
    expect(info.size).toBe(5)
  })

  test('a zero-byte file works', async () => {
    s = await startTestServer()
    const info = await s.agent.upload('empty.txt', new Uint8Array(0), 'text/plain')
    expect(info.size).toBe(0)
    const res = await s.agent.download(info.file_id)
    expect(res.status).toBe(200)
    expect((await res.arrayBuffer()).byteLength).toBe(0)
  })

  test('a missing or blank name is 400 naming the field name; nothing stored', async () => {
    s = await startTestServer()
    for (const name of [undefined, '', '   ']) {
      const res = await rawUpload(name, 'data')
      expect(res.status).toBe(400)
      const body = (await res.json()) as { error: string; field: string }
      expect(body.field).toBe('name')
      expect(typeof body.error).toBe('string')
    }
    const long = await failsWith(s.agent.upload('n'.repeat(256), 'x'), 400)
    expect(long.field).toBe('name')
    expect(fileRows()).toBe(0)
    expect(filesUnder(join(s.dir, 'files'))).toEqual([])
  })

  test('a bad Content-Type is 400; nothing stored', async () => {
    s = await startTestServer()
    for (const type of ['not a type', 'text', '/plain', 'text/', 'a b/c', 'téxt/plain']) {
      const e = await failsWith(s.agent.upload('x.txt', 'data', type), 400)
      expect(e.field).toBe('content-type')
    }
    expect(fileRows()).toBe(0)
    expect(filesUnder(join(s.dir, 'files'))).toEqual([])
  })

  test('a name with path separators or control characters is sanitised', async () => {
    s = await startTestServer()
    const info = await s.agent.upload('../../etc/pass\\wd\n.txt', 'x', 'text/plain')
    expect(info.name).not.toContain('/')
    expect(info.name).not.toContain('\\')
    expect(info.name).not.toContain('\n')
    expect(info.name).toBe('.._.._etc_pass_wd_.txt')
    // Stored by id under the channel's directory, never by the given name.
    expect(filesUnder(s.dir).some((p) => p.includes('pass'))).toBe(false)
    expect(filesUnder(join(s.dir, 'files'))).toEqual([
      join(s.dir, 'files', s.channelId, info.file_id),
    ])
    const res = await s.agent.download(info.file_id)
    const disposition = res.headers.get('content-disposition') ?? ''
    expect(disposition).not.toContain('/')
    expect(disposition).not.toContain('\n')
  })

  test('a file exactly at the size limit is accepted', async () => {
    s = await startTestServer({ maxFileSize: 1024 })
    const info = await s.agent.upload('max.bin', binary(1024))
    expect(info.size).toBe(1024)
    const streamed = await rawUpload('streamed.bin', streamOf(1024))
    expect(streamed.status).toBe(200)
    expect(((await streamed.json()) as FileInfo).size).toBe(1024)
  })

  test('over the size limit with an honest Content-Length: 413, no file, no row', async () => {
    s = await startTestServer({ maxFileSize: 1024 })
    const res = await rawUpload('big.bin', binary(1025))
    expect(res.status).toBe(413)
    expect(typeof ((await res.json()) as { error: unknown }).error).toBe('string')
    expect(filesUnder(join(s.dir, 'files'))).toEqual([])
    expect(fileRows()).toBe(0)
  })

  test('over the size limit streamed without Content-Length: 413, no file, no row', async () => {
    s = await startTestServer({ maxFileSize: 1024 })
    // A stream body carries no Content-Length: only counting the bytes can stop it.
    const probe = new Request('http://hark.test/', { method: 'POST', body: streamOf(1) })
    expect(probe.headers.get('content-length')).toBeNull()
    const res = await s.agent.raw('POST', '/v1/files', {
      query: { name: 'big.bin' },
      body: streamOf(10_000),
      headers: { 'content-type': 'application/octet-stream' },
    })
    expect(res.status).toBe(413)
    const body = (await res.json()) as { error: unknown }
    expect(typeof body.error).toBe('string')
    expect(filesUnder(join(s.dir, 'files'))).toEqual([])
    expect(fileRows()).toBe(0)
  })

  test('a Content-Length that understates the body is still cut at the limit', async () => {
    s = await startTestServer({ maxFileSize: 1024 })
    const res = await rawUpload('liar.bin', streamOf(5000), {
      'content-type': 'application/octet-stream',
      'content-length': '10',
    })
    expect(res.status).toBe(413)
    expect(filesUnder(join(s.dir, 'files'))).toEqual([])
    expect(fileRows()).toBe(0)
  })

  test('after a refused upload, the next one works', async () => {
    s = await startTestServer({ maxFileSize: 1024 })
    expect((await rawUpload('big.bin', streamOf(4096))).status).toBe(413)
    const ok = await s.agent.upload('small.bin', binary(100))
    expect(ok.size).toBe(100)
    expect(fileRows()).toBe(1)
    expect(filesUnder(join(s.dir, 'files'))).toHaveLength(1)
  })

  test('stored files are readable only by the server (0600)', async () => {
    s = await startTestServer()
    const info = await s.agent.upload('secret.txt', 'x', 'text/plain')
    const mode = statSync(join(s.dir, 'files', s.channelId, info.file_id)).mode & 0o777
    expect(mode).toBe(0o600)
  })
})

describe('GET /v1/files/:id', () => {
  test('returns identical bytes with nosniff and a sandbox CSP', async () => {
    s = await startTestServer()
    const bytes = binary(70_000)
    const info = await s.agent.upload('data.bin', bytes, 'application/octet-stream')
    const res = await s.agent.download(info.file_id)
    expect(res.status).toBe(200)
    const got = new Uint8Array(await res.arrayBuffer())
    expect(got.byteLength).toBe(bytes.byteLength)
    expect(createHash('sha256').update(got).digest('hex')).toBe(
      createHash('sha256').update(bytes).digest('hex'),
    )
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain('sandbox')
    expect(csp).toContain("default-src 'none'")
    expect(res.headers.get('content-length')).toBe('70000')
    expect(res.headers.get('content-disposition')).toStartWith('attachment')
  })

  test('HTML and SVG are served as attachments of application/octet-stream', async () => {
    s = await startTestServer()
    const cases = [
      ['page.html', 'text/html', '<script>alert(1)</script>'],
      ['page.htm', 'text/html; charset=utf-8', '<h1>x</h1>'],
      ['app.xhtml', 'application/xhtml+xml', '<html xmlns="http://www.w3.org/1999/xhtml"/>'],
      ['pic.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>'],
      ['x.js', 'text/javascript', 'alert(1)'],
      ['x.xml', 'application/xml', '<a/>'],
    ] as const
    for (const [name, mime, text] of cases) {
      const info = await s.agent.upload(name, text, mime)
      const res = await s.agent.download(info.file_id)
      const type = res.headers.get('content-type') ?? ''
      expect(type).toBe('application/octet-stream')
      expect(type).not.toContain('html')
      expect(res.headers.get('content-disposition')).toStartWith('attachment')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toContain('sandbox')
      expect(await res.text()).toBe(text)
    }
  })

  test('safe images and text are shown inline with their own type', async () => {
    s = await startTestServer()
    const png = await s.agent.upload('shot.png', binary(64), 'image/png')
    const res = await s.agent.download(png.file_id)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('content-disposition')).toStartWith('inline')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const txt = await s.agent.upload('notes.txt', 'plain', 'text/plain')
    const r2 = await s.agent.download(txt.file_id)
    expect(r2.headers.get('content-type')).toStartWith('text/plain')
  })

  test('a non-ASCII name is carried in filename*', async () => {
    s = await startTestServer()
    const info = await s.agent.upload('résumé "final".pdf', 'x', 'application/pdf')
    expect(info.name).toBe('résumé "final".pdf')
    const res = await s.agent.download(info.file_id)
    const disposition = res.headers.get('content-disposition') ?? ''
    expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent('résumé "final".pdf')}`)
    expect(disposition).toContain('filename="r_sum_ _final_.pdf"')
  })

  test("filename* percent-encodes the characters RFC 8187 does not allow: ' ( ) *", async () => {
    s = await startTestServer()
    const info = await s.agent.upload("it's (v2)*.txt", 'x', 'text/plain')
    const res = await s.agent.download(info.file_id)
    const disposition = res.headers.get('content-disposition') ?? ''
    expect(disposition).toContain("filename*=UTF-8''it%27s%20%28v2%29%2A.txt")
  })

  test('an unknown id is 404 with a JSON error', async () => {
    s = await startTestServer()
    const res = await s.agent.raw('GET', '/v1/files/file_doesnotexist')
    expect(res.status).toBe(404)
    expect(typeof ((await res.json()) as { error: unknown }).error).toBe('string')
    expect((await failsWith(s.agent.download('file_doesnotexist'), 404)).error).toBe(
      'file not found',
    )
  })

  test("another channel's token gets 404 for the file", async () => {
    s = await startTestServer()
    const info = await s.agent.upload('mine.txt', 'mine', 'text/plain')
    const other = await s.addChannel('Other')
    expect(typeof (await failsWith(other.agent.download(info.file_id), 404)).error).toBe('string')
    // The owner still can.
    expect((await s.agent.download(info.file_id)).status).toBe(200)
  })

  test('a download needs an agent token', async () => {
    s = await startTestServer()
    const info = await s.agent.upload('mine.txt', 'mine', 'text/plain')
    expect((await s.raw().raw('GET', `/v1/files/${info.file_id}`)).status).toBe(401)
    expect((await s.person.raw('GET', `/v1/files/${info.file_id}`)).status).toBe(403)
  })
})

describe('files in message blocks', () => {
  test('image and file blocks may name a file of the same channel', async () => {
    s = await startTestServer()
    const img = await s.agent.upload('shot.png', binary(10), 'image/png')
    const doc = await s.agent.upload('doc.pdf', binary(10), 'application/pdf')
    const { message } = await s.agent.send({
      body: {
        blocks: [
          { type: 'image', file_id: img.file_id, alt: 'a shot' },
          { type: 'file', file_id: doc.file_id, name: 'doc.pdf', size: doc.size },
        ],
      },
    })
    expect(message.body.blocks).toHaveLength(2)
  })

  test("another channel's file in an image or file block is 400, also in pins and edits", async () => {
    s = await startTestServer()
    const theirs = await (await s.addChannel('Other')).agent.upload(
      'x.png',
      binary(10),
      'image/png',
    )
    const image = { type: 'image', file_id: theirs.file_id }
    const file = { type: 'file', file_id: theirs.file_id, name: 'x.png' }
    for (const block of [image, file]) {
      const e = await failsWith(s.agent.send({ body: { blocks: [block] } }), 400)
      expect(e.field).toBe('body.blocks[0].file_id')
      const p = await failsWith(s.agent.pin('p', { body: { blocks: [block] } }), 400)
      expect(p.field).toBe('body.blocks[0].file_id')
    }
    const { message } = await s.agent.send({ body: { text: 'plain' } })
    const edit = await failsWith(s.agent.edit(message.id, { blocks: [image] }), 400)
    expect(edit.field).toBe('blocks[0].file_id')
    await failsWith(s.agent.replace(message.id, { blocks: [file] }), 400)
    await failsWith(
      s.agent.send({ body: { blocks: [{ type: 'image', file_id: 'file_nope' }] } }),
      400,
    )
    expect((await s.agent.pins()).pins).toEqual([])
  })
})
