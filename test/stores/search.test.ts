import { beforeEach, expect, test } from 'bun:test'
import { pgSearchStore } from '../../src/messages/search/pg-store.ts'
import { MARK_CLOSE, MARK_OPEN, searchStore } from '../../src/messages/search/store.ts'
import { channel, describeStore, people, type StoreEngine, T } from './engines.ts'

/**
 * Search on FTS5 and on tsvector (docs/scaling.md): which messages are found, and in which
 * scope and pages, must be the same; ranking differs (bm25 / ts_rank) and is tested loosely,
 * only where both must agree (the title above the body, ties newest first).
 */
type E = StoreEngine<ReturnType<typeof searchStore>>

let rid = 0

/** A message whose body is `body` (as JSON), as the message store would have written it. */
async function message(
  e: E,
  channelId: string,
  body: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const n = ++rid
  const id = `m${n}`
  await e.insert('messages', {
    rid: n,
    id,
    channel_id: channelId,
    seq: n,
    sender: 'agent',
    body: JSON.stringify(body),
    created_at: T + n,
    updated_at: T + n,
    ...extra,
  })
  return id
}

const find = (e: E, q: string, user = 'ann', limit = 50, offset = 0) =>
  e.read((s) =>
    s.search(
      user,
      { words: q.split(' ').filter(Boolean), prefix: !q.endsWith(' ') },
      limit,
      offset,
    ),
  )
const ids = async (e: E, q: string, user = 'ann') => (await find(e, q, user)).map((r) => r.id)
const marked = (snippet: string) => snippet.replaceAll(MARK_OPEN, '[').replaceAll(MARK_CLOSE, ']')

describeStore('search store', { sqlite: searchStore, postgres: pgSearchStore }, (engine) => {
  beforeEach(() => {
    rid = 0 // each test's database is fresh
  })

  test('finds words of the text, title, markdown, code and tables; nothing else', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann', 'Build bot ✨')
    expect(await find(e, 'nightly')).toEqual([])
    const text = await message(e, 'c', { text: 'The nightly build finished' })
    const md = await message(e, 'c', {
      blocks: [{ type: 'markdown', text: 'Read **the changelog** now' }],
    })
    const code = await message(e, 'c', { blocks: [{ type: 'code', code: 'retry budget = 3' }] })
    const table = await message(e, 'c', {
      blocks: [{ type: 'table', columns: ['host'], rows: [['zebrafish lane']] }],
    })
    const title = await message(e, 'c', { title: 'Quarterly report', text: 'attached' })
    await message(e, 'c', { blocks: [{ type: 'link', url: 'https://walrus.example/' }] })
    expect(await ids(e, 'nightly ')).toEqual([text])
    expect(await ids(e, 'changelog ')).toEqual([md])
    expect(await ids(e, 'budget ')).toEqual([code])
    expect(await ids(e, 'zebrafish ')).toEqual([table])
    expect(await ids(e, 'quarterly report ')).toEqual([title])
    expect(await ids(e, 'walrus ')).toEqual([]) // a URL is not text to find
    expect(await ids(e, 'absent ')).toEqual([])
    const [hit] = await find(e, 'changelog')
    expect(hit).toMatchObject({
      id: md,
      channel_id: 'c',
      channel_label: 'Build bot ✨',
      sender: 'agent',
      created_at: T + 2,
    })
    expect(marked(hit?.snippet ?? '')).toContain('[changelog]')
  })

  test('every word must occur, in any order; accents and case do not matter', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    const both = await message(e, 'c', { text: 'Déploiement du SERVEUR terminé' })
    await message(e, 'c', { text: 'serveur seulement', title: 'Ünïcödé 東京 tower' })
    expect(await ids(e, 'deploiement serveur ')).toEqual([both])
    expect(await ids(e, 'serveur DÉPLOIEMENT ')).toEqual([both])
    expect(await ids(e, 'déploiement absent ')).toEqual([])
    expect((await ids(e, 'serveur ')).sort()).toEqual([both, 'm2'].sort())
    expect(await ids(e, 'unicode ')).toEqual(['m2'])
    expect(await ids(e, '東京 ')).toEqual(['m2'])
    // The snippet shows the text as written, the matched word marked.
    const [hit] = await find(e, 'deploiement ')
    expect(marked(hit?.snippet ?? '')).toContain('[Déploiement]')
  })

  test('the last word is a prefix while typing, the others whole words', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    const id = await message(e, 'c', { text: 'Deployment of the terminal server' })
    expect(await ids(e, 'term')).toEqual([id])
    expect(await ids(e, 'term ')).toEqual([])
    expect(await ids(e, 'deploy serv')).toEqual([]) // "deploy" is finished: a whole word
    expect(await ids(e, 'deployment serv')).toEqual([id])
    expect(await ids(e, 'DÉPLOY')).toEqual([id])
    const [hit] = await find(e, 'term')
    expect(marked(hit?.snippet ?? '')).toContain('[terminal]')
  })

  test('words are text, never query syntax', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    const id = await message(e, 'c', {
      text: `NEAR the "quoted" title: x-ray AND (OR) NOT ^caret* don't a\\b | & ! <-> done`,
    })
    for (const q of [
      '"',
      '"quoted',
      '*',
      "'",
      "'; DROP TABLE messages; --",
      '\\',
      ':*',
      '!',
      '&',
    ]) {
      expect(Array.isArray(await find(e, q))).toBe(true)
      expect(Array.isArray(await find(e, `${q} `))).toBe(true)
    }
    for (const q of ['NEAR ', 'x-ray ', 'x-ray', '"quoted" ', 'NOT done ', 'title: ', "don't "]) {
      expect(await ids(e, q)).toEqual([id])
    }
    expect(await ids(e, 'caret* ')).toEqual([id])
    expect(await ids(e, 'AND OR NOT ')).toEqual([id])
  })

  test("only the person's own live, unpinned messages", async () => {
    const e = engine()
    await people(e, 'ann', 'bob')
    await channel(e, 'a', 'ann')
    await channel(e, 'gone', 'ann')
    await channel(e, 'b', 'bob')
    const mine = await message(e, 'a', { text: 'secret platypus plans' })
    const human = await message(e, 'a', { text: 'my platypus' }, { sender: 'human' })
    const his = await message(e, 'b', { text: 'platypus for bob' })
    await message(e, 'a', { text: 'pinned platypus' }, { pin_key: 'status' })
    const deleted = await message(e, 'a', { text: 'deleted platypus' })
    await message(e, 'gone', { text: 'platypus in a deleted channel' })
    await e.rows(`UPDATE messages SET body = NULL, deleted_at = ? WHERE id = ?`, T, deleted)
    await e.rows(`DELETE FROM channels WHERE id = 'gone'`)
    expect((await ids(e, 'platypus ')).sort()).toEqual([mine, human].sort())
    expect((await find(e, 'my platypus ')).map((r) => r.sender)).toEqual(['human'])
    expect(await ids(e, 'platypus ', 'bob')).toEqual([his])
    expect(await ids(e, 'platypus ', 'nobody')).toEqual([])
  })

  test('an answer is found; an edit is found by its new words only', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    const id = await message(e, 'c', { text: 'Which region?' }, { answer: '"antarctica please"' })
    expect(await ids(e, 'antarctica ')).toEqual([id])
    await e.rows(`UPDATE messages SET body = ? WHERE id = ?`, '{"text":"uploading"}', id)
    expect(await ids(e, 'region ')).toEqual([])
    expect(await ids(e, 'uploading ')).toEqual([id])
  })

  test('ranking, loosely: the title above the body, and equal matches newest first', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    const inTitle = await message(e, 'c', { title: 'Porcupine', text: 'a long note, nothing more' })
    const inText = await message(e, 'c', { text: 'a long note that mentions porcupine in it' })
    expect(await ids(e, 'porcupine ')).toEqual([inTitle, inText])
    const older = await message(e, 'c', { text: 'same llama words' })
    const newer = await message(e, 'c', { text: 'same llama words' })
    expect(await ids(e, 'llama ')).toEqual([newer, older])
  })

  test("one person's results and their order are the same whatever other people write", async () => {
    // Issue 31, item 2: bm25 over one index for everyone ranked with everyone's word counts;
    // by writing filler until two of his own results swapped, bob read how often a word occurs
    // in ann's messages. Ann's messages here are ordered by how their words weigh against each
    // other and by their lengths, which is what other people's counts used to move.
    const e = engine()
    await people(e, 'ann', 'bob')
    await channel(e, 'a', 'ann')
    await channel(e, 'b', 'bob')
    await message(e, 'a', { text: 'alpha alpha alpha beta' })
    await message(e, 'a', { text: 'alpha beta beta beta' })
    await message(e, 'a', { text: `gamma gamma ${'words around it '.repeat(12)}` })
    await message(e, 'a', { text: 'gamma and two more' })
    await message(e, 'a', { title: 'delta', text: `${'other text '.repeat(20)}` })
    await message(e, 'a', { text: 'delta delta delta in a short one' })
    await message(e, 'a', { text: `epsilon ${'x '.repeat(30)} epsilon beta` })
    const queries = [
      'alpha beta ',
      'beta alpha ',
      'gamma ',
      'gam',
      'delta ',
      'beta ',
      'alp',
      'epsilon ',
    ]
    const results = async () => {
      const out: Record<string, unknown> = {}
      for (const q of queries) out[q] = await find(e, q)
      return out
    }
    const before = await results()
    for (const q of queries) expect((before[q] as unknown[]).length).toBeGreaterThan(0)
    // Bob writes many messages with ann's words, short and long, in titles and in text.
    for (let i = 0; i < 60; i++) {
      await message(e, 'b', { text: `alpha ${'filler '.repeat(i % 7)}` })
      await message(e, 'b', {
        title: i % 3 ? 'beta' : 'gamma',
        text: `gamma ${'long text '.repeat(40)}`,
      })
      await message(e, 'b', { text: 'delta epsilon' })
    }
    expect(await results()).toEqual(before)
    // His own are found (the index still holds everyone's): a first page of 50.
    expect(await ids(e, 'filler ', 'bob')).toHaveLength(50)
  })

  test('pages at an offset are the one ranked list, cut; past the end is empty', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    for (let i = 0; i < 23; i++) {
      await message(e, 'c', { text: `${'ibis '.repeat(1 + (i % 4))} number ${i}` })
    }
    const all = (await find(e, 'ibis ', 'ann', 50)).map((r) => r.id)
    expect(all).toHaveLength(23)
    expect(new Set(all).size).toBe(23)
    const paged: string[] = []
    for (let offset = 0; offset < 30; offset += 5) {
      const page = await find(e, 'ibis ', 'ann', 5, offset)
      expect(page.length).toBeLessThanOrEqual(5)
      paged.push(...page.map((r) => r.id))
    }
    expect(paged).toEqual(all)
    expect(await find(e, 'ibis ', 'ann', 5, 23)).toEqual([])
    expect(await find(e, 'ibis ', 'ann', 1, 0)).toHaveLength(1)
  })
})
