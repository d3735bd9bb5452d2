import { afterEach, describe, expect, test } from 'bun:test'
import { JSON_BODY_LIMIT } from '../../src/core/http/body-limit.ts'
import { startTestServer, type TestServer } from '../harness.ts'
import { rawHttp } from './util.ts'

/**
 * Finding 9 of the attack pass, over a real socket (Bun builds a request's URL from its Host
 * header, which `app.handle()` never sees): `Host: [` and `Host: %zz` gave 500, a Host of one
 * to three characters gave 404 on every route, and a body over Bun's own cap got an empty 413.
 */

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const get = (port: number, path: string, host: string, extra = '') =>
  rawHttp(port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`)

describe('Host headers', () => {
  for (const host of ['[', '%zz', '[::1', 'a b', 'x:99999999']) {
    test(`Host: ${JSON.stringify(host)} → 400 JSON, and the server goes on`, async () => {
      server = await startTestServer({ listen: true })
      const answer = await get(server.port, '/v1/info', host)
      expect(answer.status).toBe(400)
      expect(answer.headers).toMatch(/content-type: application\/json/i)
      expect(JSON.parse(answer.body)).toEqual({ error: 'the Host header is not a valid host name' })
      const health = await get(server.port, '/health', 'localhost')
      expect(health.status).toBe(200)
    })
  }

  test('a control character in Host is refused by the HTTP parser itself (400, closed)', async () => {
    server = await startTestServer({ listen: true })
    const answer = await get(server.port, '/v1/info', '\u0001')
    expect(answer.status).toBe(400)
    expect((await get(server.port, '/health', 'localhost')).status).toBe(200)
  })

  for (const host of ['a', 'pi', 'nas', 'a:1', 'localhost', '127.0.0.1', '[::1]:8080']) {
    test(`Host: ${host} reaches every route: public, agent and long-poll`, async () => {
      server = await startTestServer({ listen: true })
      const info = await get(server.port, '/v1/info', host)
      expect(info.status).toBe(200)
      expect(JSON.parse(info.body).name).toBe('Hark')
      const auth = `Authorization: Bearer ${server.agentToken}\r\n`
      const feed = await get(server.port, '/v1/messages?since=0&wait=1', host, auth)
      expect(feed.status).toBe(200)
      expect(JSON.parse(feed.body)).toEqual({ messages: [], cursor: 0, has_more: false })
      const body = '{"body":{"text":"hi"}}'
      const sent = await rawHttp(
        server.port,
        `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        body,
      )
      expect(sent.status).toBe(200)
      expect(JSON.parse(sent.body).message.body).toEqual({ text: 'hi' })
      const missing = await get(server.port, '/v1/nope', host)
      expect(missing.status).toBe(404)
      expect(JSON.parse(missing.body).error).toBe('no route GET /v1/nope')
    })
  }
})

describe('bodies over the caps', () => {
  test('an upload declaring more than the upload limit: 413 with a JSON error, before reading', async () => {
    server = await startTestServer({ listen: true, maxFileSize: 1024 * 1024 })
    const answer = await rawHttp(
      server.port,
      `POST /v1/files?name=big.bin HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${server.agentToken}\r\n` +
        'Content-Type: application/octet-stream\r\nContent-Length: 10000000000\r\n\r\n',
    )
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body).error).toContain('upload limit (1048576 bytes)')
  })

  test('a JSON body declaring 10 GB: 413 with a JSON error, before reading', async () => {
    server = await startTestServer({ listen: true })
    const answer = await rawHttp(
      server.port,
      'POST /v1/pair/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Content-Length: 10000000000\r\n\r\n',
    )
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body).error).toBe(
      `request body is larger than ${JSON_BODY_LIMIT} bytes`,
    )
  })
})
