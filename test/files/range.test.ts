import { afterEach, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../harness.ts'

/** Range on the default store (files on disk); test/files/s3.test.ts has the same on S3. */
let s: TestServer
afterEach(() => s?.close())

test('disk downloads answer Range with 206 and Content-Range, 416 past the end', async () => {
  s = await startTestServer()
  const text = 'abcdefghijklmnopqrstuvwxyz'
  const info = await s.agent.upload('a.txt', text, 'text/plain')
  const get = (headers: Record<string, string>) =>
    s.agent.raw('GET', `/v1/files/${info.file_id}`, { headers })
  const part = await get({ range: 'bytes=2-4' })
  expect(part.status).toBe(206)
  expect(part.headers.get('content-range')).toBe('bytes 2-4/26')
  expect(part.headers.get('content-length')).toBe('3')
  expect(part.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
  expect(await part.text()).toBe('cde')
  const tail = await get({ range: 'bytes=-3' })
  expect(await tail.text()).toBe('xyz')
  const past = await get({ range: 'bytes=26-' })
  expect(past.status).toBe(416)
  expect(past.headers.get('content-range')).toBe('bytes */26')
  // Several ranges or nonsense: the whole file, as RFC 9110 allows.
  for (const range of ['bytes=0-1,4-5', 'lines=1-2', 'bytes=5-2']) {
    const whole = await get({ range })
    expect(whole.status).toBe(200)
    expect(await whole.text()).toBe(text)
  }
  const full = await get({})
  expect(full.headers.get('accept-ranges')).toBe('bytes')
  expect(await full.text()).toBe(text)
})
