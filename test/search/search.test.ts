import { afterEach, describe, expect, test } from 'bun:test'
import type { SearchResponse } from '../../src/messages/search/schema.ts'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'

/**
 * GET /v1/app/search (issue 18): the person's own messages by their words, best first, paged;
 * the index follows sends, edits, answers and deletes; the query is text, never FTS5 syntax.
 */

let s: TestServer
afterEach(() => s?.close())

type Person = TestServer['person']
type Query = { q?: string; limit?: string | number; cursor?: string }

const search = (query: Query, person: Person = s.person) =>
  person.call<SearchResponse>('GET', '/v1/app/search', {
    query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
  })
const ids = async (q: string, person?: Person) =>
  (await search({ q }, person)).results.map((r) => r.message_id)
const send = async (body: Parameters<TestServer['agent']['send']>[0]['body']) =>
  (await s.agent.send({ body })).message.id
/** The snippet's parts as `a [b] c`, matches in brackets. */
const marked = (r: SearchResponse['results'][number]) =>
  r.snippet.map((p) => (p.match ? `[${p.text}]` : p.text)).join('')

describe('finding messages', () => {
  test('by words of the text, a markdown block, a code block, a table and the title', async () => {
    s = await startTestServer({ label: 'Builder' })
    const text = await send({ text: 'The nightly build finished' })
    const md = await send({ blocks: [{ type: 'markdown', text: 'Read **the changelog** now' }] })
    const code = await send({
      blocks: [{ type: 'code', code: 'const retryBudget = 3', language: 'ts' }],
    })
    const table = await send({
      blocks: [{ type: 'table', columns: ['host'], rows: [['zebrafish.example']] }],
    })
    const title = await send({ title: 'Quarterly report', text: 'attached' })
    const none = await send({ blocks: [{ type: 'link', url: 'https://nightly.example/' }] })

    expect(await ids('nightly')).toEqual([text])
    expect(await ids('changelog')).toEqual([md])
    expect(await ids('retryBudget')).toEqual([code])
    expect(await ids('zebrafish')).toEqual([table])
    expect(await ids('quarterly report')).toEqual([title])
    expect(await ids('nightly')).not.toContain(none) // a URL is not text to find

    const [hit] = (await search({ q: 'changelog' })).results
    expect(hit).toMatchObject({
      message_id: md,
      channel_id: s.channelId,
      channel_label: 'Builder',
      sender: 'agent',
    })
    expect(typeof hit?.created_at).toBe('number')
    expect(marked(hit as SearchResponse['results'][number])).toContain('[changelog]')
  })

  test('every word must occur; the last is a prefix while typing; accents and case do not matter', async () => {
    s = await startTestServer()
    const both = await send({ text: 'Déploiement du serveur terminé' })
    await send({ text: 'serveur seulement' })
    expect(await ids('deploiement serveur')).toEqual([both])
    expect(await ids('DÉPLOIEMENT')).toEqual([both])
    expect(await ids('term')).toEqual([both]) // "term" finds "terminé" while typing
    expect(await ids('term ')).toEqual([]) // a finished word is a whole word
  })

  test("the person's own messages and answers are found, with who sent them", async () => {
    s = await startTestServer()
    const mine = (await s.person.send(s.channelId, { text: 'please rotate the keys' })).message.id
    const ask = await send({
      text: 'Which region?',
      blocks: [{ type: 'text_input', id: 'r', label: 'Region' }],
    })
    await s.person.answer(ask, 'antarctica please')
    expect(await ids('rotate')).toEqual([mine])
    expect((await search({ q: 'rotate' })).results[0]?.sender).toBe('human')
    expect(await ids('antarctica')).toEqual([ask])
  })

  test('a pinned message is not a result (it has no place in the thread)', async () => {
    s = await startTestServer()
    await s.agent.pin('status', { body: { text: 'pinned marmalade' } })
    expect(await ids('marmalade')).toEqual([])
  })
})

describe('ranking', () => {
  test('a word twice ranks above once, and in the title above in the text', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    // The better match is the older one each time: newest-first only breaks ties.
    const twice = await send({ text: 'the kettle, the kettle: it whistles and sings, ready soon' })
    clock.advance(1)
    const once = await send({ text: 'the kettle is on, tea is brewing, milk is ready soon' })
    expect(await ids('kettle')).toEqual([twice, once])

    const inTitle = await send({ title: 'Porcupine', text: 'a long note that says nothing more' })
    clock.advance(1)
    const inText = await send({ text: 'a long note that mentions porcupine somewhere in it' })
    expect(await ids('porcupine')).toEqual([inTitle, inText])
  })
})

describe('keeping the index current', () => {
  test('an edit is found by its new words, no longer by its old ones', async () => {
    s = await startTestServer()
    const id = await send({ text: 'status: compiling' })
    await s.agent.edit(id, { text: 'status: uploading' })
    expect(await ids('compiling')).toEqual([])
    expect(await ids('uploading')).toEqual([id])
    await s.agent.replace(id, { blocks: [{ type: 'heading', text: 'Finished' }] })
    expect(await ids('uploading')).toEqual([])
    expect(await ids('finished')).toEqual([id])
  })

  test('a deleted message, or a deleted channel, is found no more (and leaves the index)', async () => {
    s = await startTestServer()
    const id = await send({ text: 'ephemeral walrus' })
    const other = await s.addChannel('Other')
    await other.agent.send({ body: { text: 'walrus in another channel' } })
    expect((await ids('walrus')).length).toBe(2)
    await s.agent.remove(id)
    expect((await ids('walrus')).length).toBe(1)
    await s.person.call('DELETE', `/v1/app/channels/${other.channelId}`)
    expect(await ids('walrus')).toEqual([])
    const rows = s.ctx.db.query(
      "SELECT count(*) AS n FROM message_fts WHERE message_fts MATCH 'walrus'",
    )
    expect(rows.get()).toEqual({ n: 0 })
  })
})

describe('whose messages', () => {
  test("another person's channels never appear, in either direction", async () => {
    s = await startTestServer()
    const bobChannel = await s.addChannel('Bob agent', 'bob@example.com')
    const bob = await s.addPerson('bob@example.com')
    const mine = await send({ text: 'secret platypus plans' })
    const his = (await bobChannel.agent.send({ body: { text: 'platypus for bob' } })).message.id
    expect(await ids('platypus')).toEqual([mine])
    expect(await ids('platypus', bob)).toEqual([his])
    await failsWith(search({ q: 'platypus' }, s.personClient(bobChannel.token)), 403)
    await failsWith(search({ q: 'platypus' }, s.personClient('')), 401)
  })
})

describe('paging', () => {
  test('pages return every result once, best first, then a null cursor', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const sent = new Set<string>()
    for (let i = 0; i < 23; i++) {
      clock.advance(1)
      sent.add(await send({ text: `${'llama '.repeat(1 + (i % 4))} number ${i}` }))
    }
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await search({ q: 'llama', limit: 5, ...(cursor ? { cursor } : {}) })
      expect(page.results.length).toBeLessThanOrEqual(5)
      seen.push(...page.results.map((r) => r.message_id))
      cursor = page.cursor ?? undefined
      pages++
    } while (cursor)
    expect(pages).toBe(5)
    expect(seen.length).toBe(23)
    expect(new Set(seen)).toEqual(sent)
    // The pages are the one ranked list, cut: the same as asking for it at once.
    const all = await search({ q: 'llama', limit: 50 })
    expect(all.results.map((r) => r.message_id)).toEqual(seen)
    expect(all.cursor).toBeNull()
  })
})

describe('the query is text, never FTS5 syntax', () => {
  test('quotes, *, NEAR, -, :, ^, parentheses and operators are harmless', async () => {
    s = await startTestServer()
    const id = await send({ text: 'NEAR the "quoted" title: x-ray AND (OR) NOT ^caret* done' })
    for (const q of [
      '"',
      '""',
      '"quoted',
      'quoted"',
      '*',
      'x*',
      'NEAR',
      'NEAR(x ray)',
      'x-ray',
      '-ray',
      'title:',
      'title:x',
      'body:quoted',
      '^caret',
      '(OR)',
      'AND',
      'NOT done',
      '{title body}: x',
      "'; DROP TABLE messages; --",
      '\u0002',
    ]) {
      const res = await search({ q })
      expect(Array.isArray(res.results)).toBe(true)
    }
    expect(await ids('NEAR')).toEqual([id])
    expect(await ids('x-ray')).toEqual([id])
    expect(await ids('"quoted"')).toEqual([id])
    expect(await ids('NOT done')).toEqual([id]) // both words, not "everything but done"
    expect(await ids('title:')).toEqual([id])
    expect(await ids('*')).toEqual([]) // no word to find: nothing, not everything
  })
})

describe('bad input is 400 naming the field', () => {
  test('q: missing, empty, only spaces, longer than 200 characters', async () => {
    s = await startTestServer()
    for (const query of [{}, { q: '' }, { q: '   ' }, { q: 'a'.repeat(201) }]) {
      expect((await failsWith(search(query), 400)).field).toBe('q')
    }
    expect((await search({ q: 'a'.repeat(200) })).results).toEqual([])
  })

  test('limit: zero, negative, not a number (above 50 is 50)', async () => {
    s = await startTestServer()
    for (const limit of ['0', '-1', 'ten', '1.5']) {
      expect((await failsWith(search({ q: 'x', limit }), 400)).field).toBe('limit')
    }
    // Above the page's maximum is the maximum, as elsewhere in the API.
    for (let i = 0; i < 52; i++) await send({ text: `ibis ${i}` })
    expect((await search({ q: 'ibis', limit: 999 })).results.length).toBe(50)
  })

  test("cursor: garbage, forged, or another search's", async () => {
    s = await startTestServer()
    for (let i = 0; i < 3; i++) await send({ text: `heron ${i}` })
    const { cursor } = await search({ q: 'heron', limit: 1 })
    expect(cursor).toBeString()
    const forged = Buffer.from('999999.AAAAAAAA').toString('base64url')
    for (const bad of ['x', '!!!', '0', forged, 'Z'.repeat(80)]) {
      expect((await failsWith(search({ q: 'heron', cursor: bad }), 400)).field).toBe('cursor')
    }
    const other = await failsWith(search({ q: 'egret', cursor: cursor as string }), 400)
    expect(other.field).toBe('cursor')
    expect((await search({ q: 'heron', cursor: cursor as string, limit: 1 })).results.length).toBe(
      1,
    )
  })
})
