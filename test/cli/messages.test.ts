import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '../../src/messages/schema.ts'
import { liveCli } from './live.ts'

const live = liveCli()

const hark = (args: string[], stdin?: string) => live.cli.run(args, { env: live.env, stdin })

/** The message as the person's app reads it. */
async function seen(id: string): Promise<Message> {
  const { messages } = await live.server.person.feed(live.server.channelId)
  const m = messages.find((x) => x.id === id)
  if (!m || 'deleted' in m) throw new Error(`${id} is not in the feed`)
  return m as Message
}

describe('hark send', () => {
  test('text from the arguments; prints the id', async () => {
    const out = await hark(['send', 'build', 'is', 'green'])
    expect(out.code).toBe(0)
    const id = out.stdout.trim()
    expect(id).toMatch(/^msg_/)
    expect((await seen(id)).body).toEqual({ text: 'build is green' })
  })

  test('text from stdin when nothing else is given; --json prints { message }', async () => {
    const out = await hark(['send', '--json'], 'line 1\nline 2\n')
    expect(out.code).toBe(0)
    const { message } = out.json<{ message: Message }>()
    expect(message.body).toEqual({ text: 'line 1\nline 2' })
    expect(message.sender).toBe('agent')
    expect(out.stdout.trim().split('\n')).toHaveLength(1)
    // With a title there is something to send: stdin is left alone (an agent's may never close).
    const titled = await hark(['send', '--title', 'Log tail', '--json'], 'not read\n')
    expect(titled.json<{ message: Message }>().message.body).toEqual({ title: 'Log tail' })
  })

  test('"-" reads stdin even beside other flags', async () => {
    const out = await hark(['send', '-', '--title', 'T', '--json'], 'from stdin')
    expect(out.json<{ message: Message }>().message.body.text).toBe('from stdin')
  })

  test('--markdown, repeated --block, --silent', async () => {
    const md = join(live.cli.home, 'notes.md')
    writeFileSync(md, '# Done\n\n- a\n- b\n')
    const out = await hark([
      'send',
      '--markdown',
      md,
      '--block',
      '{"type":"code","code":"make","language":"sh"}',
      '--block',
      '[{"type":"keyvalue","items":[{"key":"tests","value":"42"}]}]',
      '--silent',
      '--json',
    ])
    expect(out.code).toBe(0)
    const { message } = out.json<{ message: Message }>()
    expect(message.silent).toBe(true)
    expect(message.body.blocks?.map((b) => b.type)).toEqual(['markdown', 'code', 'keyvalue'])
    expect(message.body.blocks?.[0]).toMatchObject({ text: '# Done\n\n- a\n- b\n' })
  })

  test('--file and --image upload first, then attach', async () => {
    const report = join(live.cli.home, 'report.txt')
    const shot = join(live.cli.home, 'shot.png')
    writeFileSync(report, 'all good')
    writeFileSync(shot, new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    const out = await hark(['send', 'see attached', '--file', report, '--image', shot, '--json'])
    expect(out.code).toBe(0)
    const blocks = out.json<{ message: Message }>().message.body.blocks ?? []
    expect(blocks).toEqual([
      { type: 'image', file_id: expect.stringMatching(/^file_/), name: 'shot.png' },
      {
        type: 'file',
        file_id: expect.stringMatching(/^file_/),
        name: 'report.txt',
        mime: expect.stringContaining('text/plain'),
        size: 8,
      },
    ])
  })

  test('usage errors exit 2: nothing to send, bad JSON, unknown flag; a missing file 1', async () => {
    for (const args of [
      ['send'],
      ['send', '--block', '{nope'],
      ['send', '--block', '{"no":"type"}'],
      ['send', 'x', '--bogus'],
      ['send', '--title'],
    ]) {
      const out = await hark(args)
      expect({ args, code: out.code }).toEqual({ args, code: 2 })
      expect(out.stdout).toBe('')
      expect(out.stderr).toStartWith('hark: ')
    }
    for (const flag of ['--file', '--markdown']) {
      const path = join(live.cli.home, 'missing.bin')
      const missing = await hark(['send', 'x', flag, path])
      expect(missing.code).toBe(1)
      expect(missing.stderr).toBe(`hark: no such file: ${path}\n`)
    }
  })

  test("the server's 400 is exit 1 with its message", async () => {
    const out = await hark(['send', '--block', '{"type":"choice","id":"c","options":[]}'])
    expect(out.code).toBe(1)
    expect(out.stderr).toContain('body.blocks[0].options')
  })
})

describe('hark edit and rm', () => {
  test('edits title, text and a block by id; "" removes a field', async () => {
    const sent = await hark([
      'send',
      'step 1',
      '--title',
      'Deploy',
      '--block',
      '{"type":"progress","id":"bar","value":1,"max":4}',
    ])
    const id = sent.stdout.trim()
    const out = await hark([
      'edit',
      id,
      '--text',
      'step 2',
      '--block-patch',
      '{"id":"bar","value":2}',
      '--json',
    ])
    expect(out.code).toBe(0)
    const { message } = out.json<{ message: Message }>()
    expect(message.body.text).toBe('step 2')
    expect(message.body.blocks?.[0]).toMatchObject({ id: 'bar', value: 2, max: 4 })
    const map = await hark(['edit', id, '--title', '', '--block-patch', '{"bar":{"value":4}}'])
    expect(map.code).toBe(0)
    expect(map.stdout.trim()).toBe(`edited ${id}`)
    const now = await seen(id)
    expect(now.body.title).toBeUndefined()
    expect(now.body.blocks?.[0]).toMatchObject({ value: 4 })
  })

  test('an edit with nothing to change is exit 2; an unknown id exit 1', async () => {
    expect((await hark(['edit', 'msg_x'])).code).toBe(2)
    expect((await hark(['edit', 'msg_nope', '--text', 'x'])).code).toBe(1)
  })

  test('rm deletes; --json prints { ok: true }', async () => {
    const id = (await hark(['send', 'short-lived'])).stdout.trim()
    const out = await hark(['rm', id, '--json'])
    expect(out.code).toBe(0)
    expect(out.json()).toEqual({ ok: true })
    const { messages } = await live.server.person.feed(live.server.channelId)
    expect(messages.find((m) => m.id === id)).toEqual({ id, deleted: true })
    expect((await hark(['rm', id])).code).toBe(1)
    expect((await hark(['rm'])).code).toBe(2)
  })
})

describe('help', () => {
  test('hark help COMMAND and COMMAND --help print the command help; exit 0', async () => {
    const a = await live.cli.run(['help', 'ask'])
    const b = await live.cli.run(['ask', '--help'])
    expect(a.code).toBe(0)
    expect(a.stdout).toContain('Usage: hark ask')
    expect(a.stdout).toContain('--choice')
    expect(b.stdout).toBe(a.stdout)
    for (const name of ['init', 'join', 'status', 'logout', 'send', 'wait', 'cancel', 'inbox']) {
      expect((await live.cli.run(['help', name])).stdout).toContain(`Usage: hark ${name}`)
    }
  })
})
