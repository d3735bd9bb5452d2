import { afterEach, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { LIMITS } from '../../src/messages/limits.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

/**
 * Records files straight into the database, as if uploaded earlier, so the quota can be
 * reached without writing a gigabyte. The quota counts what is recorded.
 */
function recordFiles(channelId: string, count: number, bytesEach: number) {
  const insert = s.ctx.db.query(
    `INSERT INTO files (id, channel_id, name, mime, size, sha256, created_at)
     VALUES (?1, ?2, 'old.bin', 'application/octet-stream', ?3, '', 0)`,
  )
  s.ctx.db.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(`file_old${channelId}${i}`, channelId, bytesEach)
  })()
}

const rows = (channelId: string) =>
  (
    s.ctx.db.query('SELECT count(*) AS n FROM files WHERE channel_id = ?1').get(channelId) as {
      n: number
    }
  ).n
const onDisk = (channelId: string) => {
  try {
    return readdirSync(join(s.ctx.filesDir, channelId)).length
  } catch {
    return 0
  }
}
const tmpFiles = () => readdirSync(join(s.ctx.filesDir, '.tmp')).length

describe('files per channel', () => {
  test(`the ${LIMITS.filesPerChannel}th file is taken, the next is 409 and nothing is kept`, async () => {
    s = await startTestServer()
    recordFiles(s.channelId, LIMITS.filesPerChannel - 1, 10)
    await s.agent.upload('last.txt', 'fits', 'text/plain')
    expect(rows(s.channelId)).toBe(LIMITS.filesPerChannel)
    const e = await failsWith(s.agent.upload('one-more.txt', 'no room', 'text/plain'), 409)
    expect(e.error).toContain(`${LIMITS.filesPerChannel} files`)
    expect(rows(s.channelId)).toBe(LIMITS.filesPerChannel)
    expect(onDisk(s.channelId)).toBe(1)
    expect(tmpFiles()).toBe(0)
  })

  test('the limit is per channel: another channel still takes files', async () => {
    s = await startTestServer()
    recordFiles(s.channelId, LIMITS.filesPerChannel, 10)
    await failsWith(s.agent.upload('x.txt', 'x', 'text/plain'), 409)
    const other = await s.addChannel('Other')
    const info = await other.agent.upload('x.txt', 'x', 'text/plain')
    expect(info.size).toBe(1)
  })
})

describe('storage per channel', () => {
  test('an upload that fits exactly is taken; one byte more is 413 with nothing kept', async () => {
    s = await startTestServer()
    const used = LIMITS.channelStorageBytes - 100
    recordFiles(s.channelId, 1, used)
    const e = await failsWith(s.agent.upload('big.bin', new Uint8Array(101)), 413)
    expect(e.error).toContain('storage')
    expect(rows(s.channelId)).toBe(1)
    expect(onDisk(s.channelId)).toBe(0)
    expect(tmpFiles()).toBe(0)
    const fits = await s.agent.upload('fits.bin', new Uint8Array(100))
    expect(fits.size).toBe(100)
    await failsWith(s.agent.upload('one.bin', new Uint8Array(1)), 413)
    expect(rows(s.channelId)).toBe(2)
  })

  test('an upload without Content-Length is cut at the quota: 413, nothing kept', async () => {
    s = await startTestServer()
    recordFiles(s.channelId, 1, LIMITS.channelStorageBytes - 1000)
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 5000) return controller.close()
        sent += 500
        controller.enqueue(new Uint8Array(500))
      },
    })
    const response = await s.agent.raw('POST', '/v1/files', {
      query: { name: 'stream.bin' },
      body,
      headers: { 'content-type': 'application/octet-stream' },
    })
    expect(response.status).toBe(413)
    const json = (await response.json()) as { error: string }
    expect(json.error).toContain('storage')
    expect(rows(s.channelId)).toBe(1)
    expect(onDisk(s.channelId)).toBe(0)
    expect(tmpFiles()).toBe(0)
  })

  test('concurrent uploads cannot overshoot the quota together', async () => {
    s = await startTestServer()
    recordFiles(s.channelId, 1, LIMITS.channelStorageBytes - 1500)
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) => s.agent.upload(`c${i}.bin`, new Uint8Array(1000))),
    )
    expect(results.filter((r) => r.status === 'fulfilled').length).toBe(1)
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as { status: number }).status).toBe(413)
    }
    const used = await s.ctx.store.files.usage(s.channelId)
    expect(used.bytes).toBeLessThanOrEqual(LIMITS.channelStorageBytes)
    expect(onDisk(s.channelId)).toBe(1)
    expect(tmpFiles()).toBe(0)
  })
})
