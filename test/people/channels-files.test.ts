import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { FileInfo } from '../../src/files/schema.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'
import { count, fieldOf } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

type Person = TestServer['person']

const upload = (id: string, name: string, data: BodyInit, mime = 'text/plain') =>
  s.person.call<FileInfo>('POST', `/v1/app/channels/${id}/files`, {
    query: { name },
    body: data,
    headers: { 'content-type': mime },
  })
const download = (id: string, fileId: string, person: Person = s.person) =>
  person.raw('GET', `/v1/app/channels/${id}/files/${fileId}`)

describe("the person's files", () => {
  test('the person uploads to a channel; the agent and the person download it', async () => {
    s = await startTestServer()
    const info = await upload(s.channelId, 'notes.txt', 'hello agent')
    expect(info).toMatchObject({ name: 'notes.txt', mime: 'text/plain', size: 11 })
    expect(info.file_id).toStartWith('file_')
    const byAgent = await s.agent.download(info.file_id)
    expect(byAgent.status).toBe(200)
    expect(await byAgent.text()).toBe('hello agent')
    const byPerson = await download(s.channelId, info.file_id)
    expect(byPerson.status).toBe(200)
    expect(byPerson.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await byPerson.text()).toBe('hello agent')
    expect(existsSync(join(s.dir, 'files', s.channelId, info.file_id))).toBe(true)
  })

  test("the person downloads the agent's files, HTML as an attachment", async () => {
    s = await startTestServer()
    const info = await s.agent.upload('page.html', '<script>alert(1)</script>', 'text/html')
    const res = await download(s.channelId, info.file_id)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/octet-stream')
    expect(res.headers.get('content-disposition')).toStartWith('attachment')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })

  test("a file is reached only through its own channel; another person's channel is 404", async () => {
    s = await startTestServer()
    const other = await s.addChannel('Other')
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    const mine = await s.agent.upload('a.txt', 'a', 'text/plain')
    const bobFile = await bobs.agent.upload('b.txt', 'b', 'text/plain')
    expect((await download(other.channelId, mine.file_id)).status).toBe(404)
    expect((await download(bobs.channelId, bobFile.file_id)).status).toBe(404)
    expect((await download(s.channelId, bobFile.file_id)).status).toBe(404)
    expect((await download(s.channelId, 'file_nope')).status).toBe(404)
    await failsWith(upload(bobs.channelId, 'x.txt', 'x'), 404)
    await failsWith(upload('ch_nope', 'x.txt', 'x'), 404)
    expect(count(s.ctx, 'files', 'channel_id = ?1', bobs.channelId)).toBe(1)
  })

  test('an upload without a name is 400 naming name, and leaves nothing behind', async () => {
    s = await startTestServer()
    const res = await s.person.raw('POST', `/v1/app/channels/${s.channelId}/files`, {
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    })
    expect(res.status).toBe(400)
    expect(await fieldOf(res)).toBe('name')
    expect(count(s.ctx, 'files')).toBe(0)
  })

  test('needs a login (401); an agent token is 403; a cookie upload needs the app origin', async () => {
    s = await startTestServer()
    const info = await s.agent.upload('a.txt', 'a', 'text/plain')
    expect(
      (await s.raw().raw('GET', `/v1/app/channels/${s.channelId}/files/${info.file_id}`)).status,
    ).toBe(401)
    expect(
      (await s.agent.raw('GET', `/v1/app/channels/${s.channelId}/files/${info.file_id}`)).status,
    ).toBe(403)
    await failsWith(
      s
        .raw()
        .call('POST', `/v1/app/channels/${s.channelId}/files`, { query: { name: 'x' }, body: 'x' }),
      401,
    )
    const { cookie } = await s.session()
    const foreign = await s.request('POST', `/v1/app/channels/${s.channelId}/files?name=x.txt`, {
      cookie,
      origin: 'https://evil.example',
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    })
    expect(foreign.status).toBe(403)
    expect(count(s.ctx, 'files')).toBe(1)
    const ok = await s.request('POST', `/v1/app/channels/${s.channelId}/files?name=x.txt`, {
      cookie,
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    })
    expect(ok.status).toBe(200)
    const got = await s.request('GET', `/v1/app/channels/${s.channelId}/files/${ok.body.file_id}`, {
      cookie,
      origin: null,
    })
    expect(got.status).toBe(200)
    expect(got.body).toBe('x')
  })
})
