import { describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAgentClient } from '../../src/agent/client.ts'
import type { Pin } from '../../src/messages/pin-schema.ts'
import { liveCli } from './live.ts'

const live = liveCli()

const hark = (args: string[]) => live.cli.run(args, { env: live.env, cwd: live.cli.home })

describe('pins', () => {
  test('pin, replace in place, list, unpin', async () => {
    const first = await hark(['pin', 'build', 'Build', 'running', '--title', 'CI', '--json'])
    expect(first.code).toBe(0)
    const { pin } = first.json<{ pin: Pin }>()
    expect(pin).toMatchObject({
      key: 'build',
      message: { body: { title: 'CI', text: 'Build running' } },
    })
    const second = await hark(['pin', 'build', 'Build', 'green'])
    expect(second.stdout.trim()).toBe(`pinned build (${pin.message.id})`)
    await hark(['pin', 'task', 'refactoring the parser', '--silent'])
    const list = await hark(['pins', '--json'])
    expect(list.json<{ pins: Pin[] }>().pins.map((p) => [p.key, p.message.body.text])).toEqual([
      ['build', 'Build green'],
      ['task', 'refactoring the parser'],
    ])
    const human = await hark(['pins'])
    expect(human.stdout).toContain('build  Build green')
    const gone = await hark(['unpin', 'task', '--json'])
    expect(gone.json()).toEqual({ ok: true })
    expect((await hark(['unpin', 'task'])).code).toBe(1)
    expect((await hark(['pin', 'empty'])).code).toBe(2)
  })

  test('progress pins a silent progress bar and moves it', async () => {
    const out = await hark([
      'progress',
      'tests',
      '40',
      '--max',
      '120',
      '--label',
      'unit tests',
      '--json',
    ])
    expect(out.code).toBe(0)
    const { pin } = out.json<{ pin: Pin }>()
    expect(pin.message.silent).toBe(true)
    expect(pin.message.body.blocks).toEqual([
      { type: 'progress', id: 'progress', value: 40, max: 120, label: 'unit tests' },
    ])
    const moved = await hark(['progress', 'tests', '80', '--max', '120'])
    expect(moved.stdout.trim()).toBe('tests: 80 / 120')
    const { pins } = await createAgentClient({
      baseUrl: live.server.url,
      token: live.server.agentToken,
    }).pins()
    const bar = pins.find((p) => p.key === 'tests')
    expect(bar?.message.id).toBe(pin.message.id)
    expect(bar?.message.body.blocks?.[0]).toMatchObject({ value: 80 })
    expect((await hark(['progress', 'tests', 'half'])).code).toBe(2)
    expect((await hark(['progress', 'tests', '1', '--max', '0'])).code).toBe(2)
  })
})

describe('files', () => {
  test('upload prints the id; download writes it back, by name, to a path, to stdout', async () => {
    const src = join(live.cli.home, 'data.csv')
    writeFileSync(src, 'a,b\n1,2\n')
    const up = await hark(['upload', src, '--json'])
    expect(up.code).toBe(0)
    const info = up.json<{ file_id: string; name: string; size: number }>()
    expect(info).toMatchObject({ name: 'data.csv', size: 8 })
    const plain = await hark(['upload', src, '--name', 'renamed.csv'])
    expect(plain.stdout.trim()).toMatch(/^file_/)

    const out = join(live.cli.home, 'out')
    mkdirSync(out)
    const intoDir = await hark(['download', info.file_id, out, '--json'])
    expect(intoDir.code).toBe(0)
    expect(intoDir.json()).toMatchObject({
      file_id: info.file_id,
      path: join(out, 'data.csv'),
      size: 8,
    })
    expect(readFileSync(join(out, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n')

    const named = await hark(['download', plain.stdout.trim()])
    expect(named.stdout.trim()).toBe('renamed.csv')
    expect(readFileSync(join(live.cli.home, 'renamed.csv'), 'utf8')).toBe('a,b\n1,2\n')

    const toFile = join(live.cli.home, 'copy.bin')
    expect((await hark(['download', info.file_id, toFile])).stdout.trim()).toBe(toFile)
    expect(readFileSync(toFile, 'utf8')).toBe('a,b\n1,2\n')

    const toStdout = await hark(['download', info.file_id, '-'])
    expect(toStdout.stdout).toBe('a,b\n1,2\n')
  })

  test('unknown file: exit 1; missing local file: exit 1; no argument: exit 2', async () => {
    expect((await hark(['download', 'file_nope'])).code).toBe(1)
    expect((await hark(['upload', join(live.cli.home, 'missing')])).code).toBe(1)
    expect((await hark(['upload'])).code).toBe(2)
  })
})

describe('rename', () => {
  test('renames the channel as the person sees it', async () => {
    const out = await hark(['rename', 'Nightly', 'build', '--json'])
    expect(out.code).toBe(0)
    expect(out.json()).toMatchObject({ agent: { label: 'Nightly build' } })
    const { channels } = await live.server.person.channels()
    expect(channels.find((c) => c.id === live.server.channelId)?.label).toBe('Nightly build')
    expect((await hark(['status'])).stdout).toContain('"Nightly build"')
    expect((await hark(['rename'])).code).toBe(2)
  })
})
