import { afterEach, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../harness.ts'
import { invalid, post } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

/** Sends one block (after `before`) and expects a 400 naming `field`, with nothing written. */
const rejectsBlocks = (blocks: unknown[], field: string) =>
  invalid(s, () => post(s, { body: { text: 'x', blocks } }), field)

describe('POST /v1/messages: malformed known blocks are 400 naming the field', () => {
  const cases: [string, unknown[], string][] = [
    // table
    [
      'a table row of the wrong length',
      [{ type: 'table', columns: ['a', 'b'], rows: [['1', '2'], ['only one']] }],
      'body.blocks[0].rows[1]',
    ],
    [
      'a table row longer than the columns',
      [{ type: 'table', columns: ['a'], rows: [['1', '2']] }],
      'body.blocks[0].rows[0]',
    ],
    [
      'a table cell that is neither string nor number',
      [{ type: 'table', columns: ['a'], rows: [[{ x: 1 }]] }],
      'body.blocks[0].rows[0][0]',
    ],
    ['a table without rows', [{ type: 'table', columns: ['a'] }], 'body.blocks[0].rows'],
    [
      'a table whose columns are not strings',
      [{ type: 'table', columns: [1], rows: [] }],
      'body.blocks[0].columns[0]',
    ],
    // choice
    ['a choice without options', [{ type: 'choice', id: 'c' }], 'body.blocks[0].options'],
    [
      'a choice with an empty options array',
      [{ type: 'choice', id: 'c', options: [] }],
      'body.blocks[0].options',
    ],
    [
      'a choice option without a label',
      [{ type: 'choice', id: 'c', options: [{ value: 'v' }] }],
      'body.blocks[0].options[0].label',
    ],
    [
      'two choice options with the same value',
      [{ type: 'choice', id: 'c', options: [{ label: 'A' }, { label: 'B', value: 'A' }] }],
      'body.blocks[0].options[1]',
    ],
    [
      'a choice default that is not among the options',
      [{ type: 'choice', id: 'c', options: [{ label: 'A' }], default: 'B' }],
      'body.blocks[0].default',
    ],
    [
      'a multi choice default with a value not among the options',
      [{ type: 'choice', id: 'c', multi: true, options: [{ label: 'A' }], default: ['A', 'B'] }],
      'body.blocks[0].default',
    ],
    [
      'a multi choice with a string default',
      [{ type: 'choice', id: 'c', multi: true, options: [{ label: 'A' }], default: 'A' }],
      'body.blocks[0].default',
    ],
    [
      'a single choice with an array default',
      [{ type: 'choice', id: 'c', options: [{ label: 'A' }], default: ['A'] }],
      'body.blocks[0].default',
    ],
    [
      'a choice with a non-boolean multi',
      [{ type: 'choice', id: 'c', options: [{ label: 'A' }], multi: 'yes' }],
      'body.blocks[0].multi',
    ],
    // progress
    ['a progress max of 0', [{ type: 'progress', value: 1, max: 0 }], 'body.blocks[0].max'],
    ['a negative progress max', [{ type: 'progress', value: 1, max: -5 }], 'body.blocks[0].max'],
    ['a progress without value', [{ type: 'progress', max: 10 }], 'body.blocks[0].value'],
    ['a progress value as a string', [{ type: 'progress', value: '3' }], 'body.blocks[0].value'],
    // html
    [
      'an html height above 2000',
      [{ type: 'html', html: '<p>x</p>', height: 2001 }],
      'body.blocks[0].height',
    ],
    [
      'an html height of 0',
      [{ type: 'html', html: '<p>x</p>', height: 0 }],
      'body.blocks[0].height',
    ],
    ['an html block without html', [{ type: 'html', label: 'x' }], 'body.blocks[0].html'],
    [
      'an html question without an id',
      [{ type: 'html', html: '<p>x</p>', question: true }],
      'body.blocks[0].id',
    ],
    // ids
    ['a block id of 0 characters', [{ type: 'heading', id: '', text: 'h' }], 'body.blocks[0].id'],
    [
      'a block id of 65 characters',
      [{ type: 'heading', id: 'a'.repeat(65), text: 'h' }],
      'body.blocks[0].id',
    ],
    [
      'a 65-character id on an unknown block type',
      [{ type: 'gizmo', id: 'a'.repeat(65) }],
      'body.blocks[0].id',
    ],
    ['a block id that is a number', [{ type: 'gizmo', id: 7 }], 'body.blocks[0].id'],
    [
      'duplicate block ids',
      [
        { type: 'heading', id: 'same', text: 'one' },
        { type: 'gizmo', id: 'same' },
      ],
      'body.blocks[1].id',
    ],
    [
      'duplicate input ids',
      [
        { type: 'toggle', id: 'same', label: 'A' },
        { type: 'toggle', id: 'same', label: 'B' },
      ],
      'body.blocks[1].id',
    ],
    // inputs without id
    ['a choice without id', [{ type: 'choice', options: [{ label: 'A' }] }], 'body.blocks[0].id'],
    ['a text_input without id', [{ type: 'text_input' }], 'body.blocks[0].id'],
    ['a number_input without id', [{ type: 'number_input' }], 'body.blocks[0].id'],
    ['a toggle without id', [{ type: 'toggle', label: 'T' }], 'body.blocks[0].id'],
    ['a confirm without id', [{ type: 'confirm', label: 'OK' }], 'body.blocks[0].id'],
    // other inputs
    ['a toggle without label', [{ type: 'toggle', id: 't' }], 'body.blocks[0].label'],
    ['a confirm without label', [{ type: 'confirm', id: 'c' }], 'body.blocks[0].label'],
    [
      'a confirm with an empty label',
      [{ type: 'confirm', id: 'c', label: '' }],
      'body.blocks[0].label',
    ],
    [
      'a text_input with a numeric default',
      [{ type: 'text_input', id: 't', default: 3 }],
      'body.blocks[0].default',
    ],
    [
      'a number_input default below min',
      [{ type: 'number_input', id: 'n', min: 1, max: 10, default: 0 }],
      'body.blocks[0].default',
    ],
    [
      'a number_input default above max',
      [{ type: 'number_input', id: 'n', max: 10, default: 11 }],
      'body.blocks[0].default',
    ],
    [
      'a number_input with min greater than max',
      [{ type: 'number_input', id: 'n', min: 10, max: 1 }],
      'body.blocks[0].min',
    ],
    [
      'a number_input with a string min',
      [{ type: 'number_input', id: 'n', min: '1' }],
      'body.blocks[0].min',
    ],
    // link
    [
      'a link with a javascript: url',
      [{ type: 'link', url: 'javascript:alert(1)', label: 'x' }],
      'body.blocks[0].url',
    ],
    [
      'a link with a data: url',
      [{ type: 'link', url: 'data:text/html,<script>1</script>' }],
      'body.blocks[0].url',
    ],
    ['a link with a relative url', [{ type: 'link', url: '/etc/passwd' }], 'body.blocks[0].url'],
    ['a link without url', [{ type: 'link', label: 'x' }], 'body.blocks[0].url'],
    // others
    ['a markdown block without text', [{ type: 'markdown' }], 'body.blocks[0].text'],
    ['a heading whose text is a number', [{ type: 'heading', text: 5 }], 'body.blocks[0].text'],
    ['a code block without code', [{ type: 'code', language: 'ts' }], 'body.blocks[0].code'],
    [
      'a keyvalue item without value',
      [{ type: 'keyvalue', items: [{ key: 'k' }] }],
      'body.blocks[0].items[0].value',
    ],
    ['a keyvalue without items', [{ type: 'keyvalue' }], 'body.blocks[0].items'],
    ['an image without file_id', [{ type: 'image', alt: 'x' }], 'body.blocks[0].file_id'],
    ['a block without type', [{ text: 'x' }], 'body.blocks[0].type'],
    ['a block with an empty type', [{ type: '' }], 'body.blocks[0].type'],
    ['a block that is not an object', ['markdown'], 'body.blocks[0]'],
  ]

  for (const [name, blocks, field] of cases) {
    test(`${name} → ${field}`, async () => {
      s = await startTestServer()
      await rejectsBlocks(blocks, field)
    })
  }

  test('the field names the right index when the bad block comes after good ones', async () => {
    s = await startTestServer()
    await rejectsBlocks(
      [
        { type: 'heading', text: 'ok' },
        { type: 'gizmo', anything: true },
        { type: 'table', columns: ['a'], rows: [['1'], ['2'], ['3', '4']] },
      ],
      'body.blocks[2].rows[2]',
    )
  })
})

describe('POST /v1/messages: image and file blocks need a file of this channel', () => {
  test('an image naming a nonexistent file → 400 body.blocks[0].file_id', async () => {
    s = await startTestServer()
    await rejectsBlocks([{ type: 'image', file_id: 'file_doesnotexist' }], 'body.blocks[0].file_id')
  })

  test('a file block naming a nonexistent file → 400', async () => {
    s = await startTestServer()
    await rejectsBlocks(
      [{ type: 'file', file_id: 'file_nope', name: 'x.txt' }],
      'body.blocks[0].file_id',
    )
  })

  test("an image naming another channel's file → 400", async () => {
    s = await startTestServer()
    const other = await s.addChannel()
    const theirs = await other.agent.upload('secret.png', new Uint8Array([1, 2, 3]), 'image/png')
    await rejectsBlocks([{ type: 'image', file_id: theirs.file_id }], 'body.blocks[0].file_id')
    // The same file is fine in its own channel.
    const ok = await other.agent.send({
      body: { blocks: [{ type: 'image', file_id: theirs.file_id }] },
    })
    expect(ok.message.body.blocks?.[0]?.file_id).toBe(theirs.file_id)
  })

  test("a file block naming another channel's file → 400", async () => {
    s = await startTestServer()
    const other = await s.addChannel()
    const theirs = await other.agent.upload('a.txt', 'hello', 'text/plain')
    await rejectsBlocks(
      [
        { type: 'heading', text: 'h' },
        { type: 'file', file_id: theirs.file_id, name: 'a.txt' },
      ],
      'body.blocks[1].file_id',
    )
  })

  test('a file block without name → 400 even with a real file', async () => {
    s = await startTestServer()
    const mine = await s.agent.upload('a.txt', 'hello', 'text/plain')
    await rejectsBlocks([{ type: 'file', file_id: mine.file_id }], 'body.blocks[0].name')
  })

  test('a file block with a negative size → 400', async () => {
    s = await startTestServer()
    const mine = await s.agent.upload('a.txt', 'hello', 'text/plain')
    await rejectsBlocks(
      [{ type: 'file', file_id: mine.file_id, name: 'a.txt', size: -1 }],
      'body.blocks[0].size',
    )
  })
})
