import { afterEach, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../harness.ts'
import { rawHttp } from './util.ts'

/**
 * Finding 10 of the attack pass: a legitimate slow upload (steady, 10 KiB/s) was cut at ~32 s
 * with no answer, because Bun's idle timer does not count body bytes. Slow must pass; stalled
 * must be cut, with an answer and nothing kept. Bun's idle timeout is 2 s here (it cuts a silent
 * connection at ~4 s), so a 7 s upload proves the point without a 30 s test.
 */

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const uploadHead = (token: string, length: number) =>
  `POST /v1/files?name=slow.bin HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
  `Content-Type: application/octet-stream\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`

test('a slow, steady upload outlives the idle timeout and is stored whole', async () => {
  server = await startTestServer({ listen: true, idleTimeout: 2 })
  const pieces = 12
  const size = 100
  const socket = connect(server.port, '127.0.0.1')
  const chunks: Buffer[] = []
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()))
  socket.write(uploadHead(server.agentToken, pieces * size))
  for (let i = 0; i < pieces; i++) {
    socket.write(Buffer.alloc(size, 65 + i))
    await Bun.sleep(600) // pacing the client, as a slow link would; no assertion on time
  }
  await closed
  const text = Buffer.concat(chunks).toString()
  expect(text).toStartWith('HTTP/1.1 200')
  const info = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))
  expect(info.size).toBe(pieces * size)
})

test('a stalled upload is cut with 408 JSON and nothing is kept', async () => {
  server = await startTestServer({ listen: true, uploadStallMs: 1500, idleTimeout: 2 })
  const answer = await rawHttp(
    server.port,
    uploadHead(server.agentToken, 10_000),
    'x'.repeat(100),
    10_000,
  )
  expect(answer.status).toBe(408)
  expect(JSON.parse(answer.body)).toEqual({ error: 'the upload stalled: no data for 1.5 s' })
  const ctx = server.ctx
  expect(ctx.db.query('SELECT count(*) AS n FROM files').get()).toEqual({ n: 0 })
  expect(readdirSync(join(server.dir, 'files', '.tmp'))).toEqual([])
})
