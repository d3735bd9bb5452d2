import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { failsWith, startTestServer, type TestServer, tempDir } from '../harness.ts'
import { startS3, type TestS3 } from './s3-fixture.ts'

/**
 * Files in S3 through the real HTTP API: the same uploads, downloads (with ranges), deletions
 * and sweeps as on disk, against s3rver in this process. Each test has a prefix of its own.
 */

let s3: TestS3
let s: TestServer | undefined
let n = 0
let prefix = ''
beforeAll(async () => {
  s3 = await startS3()
})
afterAll(() => s3.close())
afterEach(async () => {
  await s?.close()
  s = undefined
})

async function server(options: { maxFileSize?: number } = {}): Promise<TestServer> {
  prefix = `t${++n}`
  s = await startTestServer({ s3Url: s3.url(prefix), ...options })
  return s
}

const under = async (p: string) => (await s3.keys()).filter((k) => k.startsWith(`${p}/`))

function binary(size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size)
  for (let i = 0; i < size; i++) out[i] = (i * 7 + 3) % 256
  return out
}
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

async function eventually(cond: () => Promise<boolean>, ms = 3000): Promise<void> {
  const until = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await Bun.sleep(20)
  }
}

describe('files in S3 through the API', () => {
  test('an upload is one object at PREFIX/<channel>/<file>, nothing on disk', async () => {
    const t = await server()
    const bytes = binary(70_000)
    const info = await t.agent.upload('report.bin', bytes, 'application/octet-stream')
    expect(info.size).toBe(70_000)
    expect(await under(prefix)).toEqual([`${prefix}/${t.channelId}/${info.file_id}`])
    const row = t.ctx.db.query('SELECT sha256 FROM files').get() as { sha256: string }
    expect(row.sha256).toBe(sha(bytes))
    expect(readdirSync(join(t.dir, 'files')).filter((d) => d !== '.tmp')).toEqual([])
  })

  test('a download is proxied whole, with Hark’s headers', async () => {
    const t = await server()
    const bytes = binary(70_000)
    const info = await t.agent.upload('report.bin', bytes, 'application/octet-stream')
    const res = await t.agent.download(info.file_id)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/octet-stream')
    expect(res.headers.get('content-disposition')).toStartWith('attachment; filename="report.bin"')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
    expect(res.headers.get('accept-ranges')).toBe('bytes')
    expect(res.headers.get('etag')).toBe(`"${sha(bytes)}"`)
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes)
    // The person's side too.
    const mine = await t.request('GET', `/v1/app/channels/${t.channelId}/files/${info.file_id}`, {
      token: t.personToken,
    })
    expect(mine.status).toBe(200)
    expect(mine.headers.get('content-length')).toBe('70000')
  })

  test('Range: 206 with Content-Range; suffix and open ranges; 416 past the end', async () => {
    const t = await server()
    const bytes = binary(10_000)
    const info = await t.agent.upload('a.bin', bytes, 'application/octet-stream')
    const get = (range: string) =>
      t.agent.raw('GET', `/v1/files/${info.file_id}`, { headers: { range } })
    const cases: [string, number, number][] = [
      ['bytes=10-19', 10, 20],
      ['bytes=9990-', 9990, 10_000],
      ['bytes=-5', 9995, 10_000],
      ['bytes=9000-20000', 9000, 10_000],
    ]
    for (const [range, start, end] of cases) {
      const res = await get(range)
      expect(res.status).toBe(206)
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end - 1}/10000`)
      expect(res.headers.get('content-length')).toBe(String(end - start))
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes.slice(start, end))
    }
    const past = await get('bytes=10000-')
    expect(past.status).toBe(416)
    expect(past.headers.get('content-range')).toBe('bytes */10000')
    // An If-Range for other bytes: the whole file.
    const stale = await t.agent.raw('GET', `/v1/files/${info.file_id}`, {
      headers: { range: 'bytes=0-1', 'if-range': '"other"' },
    })
    expect(stale.status).toBe(200)
    expect((await stale.arrayBuffer()).byteLength).toBe(10_000)
  })

  test('over the size limit: 413 and no object', async () => {
    const t = await server({ maxFileSize: 5000 })
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 20_000) return c.close()
        sent += 1000
        c.enqueue(binary(1000))
      },
    })
    const res = await t.agent.raw('POST', '/v1/files', {
      query: { name: 'big.bin' },
      body,
      headers: { 'content-type': 'application/octet-stream' },
    })
    expect(res.status).toBe(413)
    expect(await under(prefix)).toEqual([])
    expect(t.ctx.db.query('SELECT count(*) AS n FROM files').get()).toEqual({ n: 0 })
  })

  test('deleting a channel deletes its objects, and no other channel’s', async () => {
    const t = await server()
    const other = await t.addChannel('Other')
    const a = await t.agent.upload('a.txt', 'aaa', 'text/plain')
    await t.agent.upload('b.txt', 'bbb', 'text/plain')
    const kept = await other.agent.upload('c.txt', 'ccc', 'text/plain')
    expect(await under(prefix)).toHaveLength(3)
    await t.person.call('DELETE', `/v1/app/channels/${t.channelId}`)
    await eventually(async () => (await under(prefix)).length === 1)
    expect(await under(prefix)).toEqual([`${prefix}/${other.channelId}/${kept.file_id}`])
    expect(a.file_id).not.toBe(kept.file_id)
  })

  test('at start, objects no record names are swept; recorded ones stay', async () => {
    const t = await server()
    const info = await t.agent.upload('keep.txt', 'keep', 'text/plain')
    await s3.client.write(`${prefix}/${t.channelId}/file_orphan`, 'left by a crash')
    await s3.client.write(`${prefix}/ch_gone/file_x`, 'of a deleted channel')
    // Not Hark's key shape: never touched.
    await s3.client.write(`${prefix}/notes.txt`, 'the operator’s')
    await t.restart()
    await t.ctx.filesSwept
    expect(await under(prefix)).toEqual([
      `${prefix}/${t.channelId}/${info.file_id}`,
      `${prefix}/notes.txt`,
    ])
    const res = await t.agent.download(info.file_id)
    expect(await res.text()).toBe('keep')
  })

  test('a recorded file whose object is gone is 404, not a broken body', async () => {
    const t = await server()
    const info = await t.agent.upload('a.txt', 'x', 'text/plain')
    await s3.client.delete(`${prefix}/${t.channelId}/${info.file_id}`)
    await failsWith(t.agent.download(info.file_id), 404)
  })
})

/** `hark serve` from source, as an operator starts it. */
async function serve(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(
    [process.execPath, join(import.meta.dir, '../../src/main.ts'), 'serve', ...args],
    {
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, HARK_CONFIG: '/dev/null' },
    },
  )
  const timer = setTimeout(() => proc.kill(), 20_000)
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  clearTimeout(timer)
  return { code, stdout, stderr }
}

describe('hark serve --s3-url', () => {
  test('a bucket that does not exist stops the start with the reason, before anything opens', async () => {
    const data = join(tempDir(), 'data')
    const r = await serve([
      '--data',
      data,
      '--port',
      '0',
      '--s3-url',
      s3.url('p', 'no-such-bucket'),
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('cannot use the S3 bucket "no-such-bucket"')
    expect(r.stderr).toContain('NoSuchBucket')
    expect(r.stderr).not.toContain('listening')
    expect(existsSync(join(data, 'hark.db'))).toBe(false)
  })

  test('an endpoint nobody answers on stops the start', async () => {
    const r = await serve([
      '--data',
      join(tempDir(), 'data'),
      '--s3-url',
      's3://k:s@127.0.0.1:1/hark-files?tls=false',
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('at http://127.0.0.1:1')
    expect(r.stderr).not.toContain('listening')
  })

  test('a malformed URL is a usage error naming the setting and the form', async () => {
    for (const bad of ['https://k:s@host/bucket', 's3://k:s@host', 's3://k@host/bucket']) {
      const r = await serve(['--s3-url', bad, '--print-config'])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('--s3-url must be s3://ACCESS_KEY:SECRET@HOST')
      expect(r.stderr).not.toContain('k:s')
    }
  })

  test('--print-config masks it', async () => {
    const r = await serve([
      '--s3-url',
      's3://AKIA:SUPERSECRET@s3.example.com/b-1/x',
      '--print-config',
    ])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('HARK_S3_URL=********  # flag')
    expect(r.stdout).not.toContain('SUPERSECRET')
  })
})

test('hark admin backup and restore refuse, pointing to the documented procedure', async () => {
  const data = join(tempDir(), 'data')
  for (const command of ['backup', 'restore']) {
    const proc = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, '../../src/main.ts'),
        'admin',
        command,
        join(data, 'x.tar'),
        '--data',
        data,
      ],
      {
        stdout: 'pipe',
        stderr: 'pipe',
        env: { ...process.env, HARK_CONFIG: '/dev/null', HARK_S3_URL: s3.url() },
      },
    )
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    expect(code).toBe(1)
    expect(stderr).toContain(
      `files are kept in S3 (HARK_S3_URL is set), so hark admin ${command} cannot`,
    )
    expect(stderr).toContain('docs/scaling.md')
    expect(stderr).not.toContain('S3RVER')
  }
})
