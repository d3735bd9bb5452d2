import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { KnownBlocks, type Message } from '../../src/messages/schema.ts'
import { type LiveMcp, startMcp } from './live.ts'

/**
 * What `hark mcp` shows a model beyond plain JSON: each block kind's fields in `tools/list`,
 * images as image content, and the channel's pins and open questions as resources.
 */
let live: LiveMcp

beforeAll(async () => {
  live = await startMcp()
})
afterAll(() => live.close())

interface Content {
  type: string
  text?: string
  data?: string
  mimeType?: string
}

const callTool = async (name: string, args: Record<string, unknown>) =>
  (await live.client.callTool({ name, arguments: args })) as {
    isError?: boolean
    content: Content[]
  }

/** A PNG of `bytes` bytes (its signature, then padding: the server keeps what it is given). */
const png = (bytes: number) => {
  const data = new Uint8Array(bytes)
  data.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  data[bytes - 1] = 7
  return data
}

describe('typed blocks', () => {
  test('tools/list shows every block kind with its fields', async () => {
    const { tools } = await live.client.listTools()
    for (const name of ['notify', 'ask', 'pin']) {
      const blocks = tools.find((t) => t.name === name)?.inputSchema.properties?.blocks as {
        items: { anyOf: [{ oneOf: { properties: Record<string, { const?: string }> }[] }, unknown] }
      }
      const kinds = blocks.items.anyOf[0].oneOf.map((b) => b.properties.type?.const)
      // Every kind a model may send: all the server knows but the one only it makes.
      const sendable = Object.keys(KnownBlocks).filter((k) => k !== 'secret_request')
      expect(kinds.sort()).toEqual(sendable.sort())
      const table = blocks.items.anyOf[0].oneOf.find((b) => b.properties.type?.const === 'table')
      expect(Object.keys(table?.properties ?? {})).toEqual(['type', 'id', 'columns', 'rows'])
      expect((table as unknown as { required: string[] }).required).toEqual([
        'type',
        'columns',
        'rows',
      ])
    }
  })

  test('a known kind with a wrong field is refused before anything is sent', async () => {
    const before = (await live.server.person.feed(live.server.channelId)).messages.length
    const bad = await callTool('notify', { blocks: [{ type: 'table', columns: 'a,b', rows: [] }] })
    expect(bad.isError).toBe(true)
    expect(bad.content[0]?.text).toContain('columns')
    const noText = await callTool('notify', { blocks: [{ type: 'markdown' }] })
    expect(noText.isError).toBe(true)
    expect(noText.content[0]?.text).toContain('a markdown block: ')
    expect(noText.content[0]?.text).toContain('at text')
    const secret = await callTool('notify', { blocks: [{ type: 'secret_request', name: 'X' }] })
    expect(secret.isError).toBe(true)
    expect(secret.content[0]?.text).toContain('only the server makes one')
    expect((await live.server.person.feed(live.server.channelId)).messages.length).toBe(before)
  })

  test('typed blocks and an unknown kind go through as given', async () => {
    const blocks = [
      { type: 'table', columns: ['file', 'lines'], rows: [['a.ts', 3]] },
      { type: 'keyvalue', items: [{ key: 'branch', value: 'main' }] },
      { type: 'sparkline', values: [1, 2, 3] },
    ]
    const sent = await callTool('notify', { text: 'report', blocks })
    expect(sent.isError).toBeFalsy()
    const id = JSON.parse(sent.content[0]?.text ?? '{}').id
    const { messages } = await live.server.person.feed(live.server.channelId)
    expect((messages.find((m) => m.id === id) as Message).body.blocks).toEqual(blocks)
  })
})

describe('images as image content', () => {
  test('read_messages returns the image a person sent, and notes one too large', async () => {
    const { agent, person, channelId } = live.server
    const small = await agent.upload('shot.png', png(2048), 'image/png')
    const big = await agent.upload('huge.png', png(2 * 1024 * 1024 + 1), 'image/png')
    await person.send(channelId, {
      text: 'look',
      blocks: [
        { type: 'image', file_id: small.file_id },
        { type: 'image', file_id: big.file_id, name: 'huge.png' },
      ],
    })
    const read = await callTool('read_messages', {})
    expect(read.isError).toBeFalsy()
    const [json, image, note] = read.content
    expect(JSON.parse(json?.text ?? '').messages[0].text).toBe('look')
    expect(image).toEqual({
      type: 'image',
      mimeType: 'image/png',
      data: Buffer.from(png(2048)).toString('base64'),
    })
    expect(note?.type).toBe('text')
    expect(note?.text).toContain(`image ${big.file_id} (huge.png) not included`)
    expect(note?.text).toContain('2.0 MiB limit')
    expect(read.content.length).toBe(3)
  })

  test('an answer that carries an image comes back with it', async () => {
    const { agent, person } = live.server
    const file = await agent.upload('sketch.png', png(512), 'image/png')
    const asking = callTool('ask', {
      question: 'Draw it',
      blocks: [{ type: 'html', id: 'pad', html: '<canvas></canvas>', question: true }],
      wait_seconds: 20,
    })
    let open: Message | undefined
    for (let i = 0; i < 200 && !open; i++) {
      open = (await person.openAsks()).asks.at(-1)
      if (!open) await Bun.sleep(25)
    }
    if (!open) throw new Error('nothing asked')
    await person.answer(open.id, { type: 'image', file_id: file.file_id })
    const r = await asking
    expect(JSON.parse(r.content[0]?.text ?? '').status).toBe('answered')
    expect(r.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' })
    // Tools whose results carry no images stay one text item.
    const pinned = await callTool('pin', {
      key: 'shot',
      blocks: [{ type: 'image', file_id: file.file_id }],
    })
    expect(pinned.content.length).toBe(1)
  })
})

describe('resources', () => {
  test('hark://pins and hark://asks are listed and read fresh', async () => {
    const { resources } = await live.client.listResources()
    expect(resources.map((r) => r.uri).sort()).toEqual(['hark://asks', 'hark://pins'])
    expect(resources.every((r) => r.mimeType === 'application/json')).toBe(true)

    await callTool('pin', { key: 'build', text: 'building' })
    const asked = await callTool('ask', { question: 'Ship?', confirm: 'Ship', wait_seconds: 0 })
    const askId = JSON.parse(asked.content[0]?.text ?? '').id

    const read = async (uri: string) => {
      const { contents } = await live.client.readResource({ uri })
      expect(contents[0]?.uri).toBe(uri)
      return JSON.parse((contents[0] as { text: string }).text)
    }
    const { pins } = await read('hark://pins')
    expect(pins.map((p: { key: string }) => p.key)).toContain('build')
    const { asks } = await read('hark://asks')
    expect(asks.map((m: Message) => m.id)).toContain(askId)

    await live.client.callTool({ name: 'cancel', arguments: { id: askId } })
    expect((await read('hark://asks')).asks.map((m: Message) => m.id)).not.toContain(askId)
  })
})
