import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAgentClient, createPersonClient } from '../../src/agent/client.ts'
import { tempDir } from '../harness.ts'
import { HARK, requireBinary, run, type Served, startServe } from './process.ts'

/** Waits (up to 5 s) until the server has logged `text`. */
async function logged(s: Served, text: string): Promise<void> {
  for (let i = 0; i < 250 && !s.log().includes(text); i++) await Bun.sleep(20)
}

/** The compiled `dist/hark`, as a self-hoster runs it: provision, serve, send, answer, stop. */
describe('dist/hark', () => {
  const dir = tempDir('hark-bin-')
  let served: Served | undefined
  let agentToken = ''
  let personToken = ''

  beforeAll(() => requireBinary())
  afterAll(() => {
    served?.proc.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  })

  test('--version and --help', async () => {
    const version = await run(['--version'])
    expect(version.code).toBe(0)
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    const help = await run(['serve', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--write-limit')
    const unknown = await run(['frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown command')
  })

  test('admin provisions a person, a channel and a person token', async () => {
    const user = await run(['admin', 'user', 'add', 'me@example.com', '--owner', '--data', dir])
    expect(user.code).toBe(0)
    const channel = await run([
      'admin',
      'channel',
      'add',
      '--user',
      'me@example.com',
      '--label',
      'CI',
      '--data',
      dir,
    ])
    expect(channel.code).toBe(0)
    agentToken = channel.stdout.trim().split('\n').at(-1) as string
    expect(agentToken).toMatch(/^hark_agent_[0-9A-Za-z]{43}$/)
    const token = await run(['admin', 'token', 'add', '--user', 'me@example.com', '--data', dir])
    expect(token.code).toBe(0)
    personToken = token.stdout.trim().split('\n').at(-1) as string
    expect(personToken).toMatch(/^hark_person_[0-9A-Za-z]{43}$/)

    const again = await run(['admin', 'user', 'add', 'me@example.com', '--data', dir])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already has an account')
    const nobody = await run([
      'admin',
      'channel',
      'add',
      '--user',
      'who@example.com',
      '--data',
      dir,
    ])
    expect(nobody.code).toBe(1)
    expect(nobody.stderr).toContain('not found')
    const usage = await run(['admin', 'channel', 'add', '--data', dir])
    expect(usage.code).toBe(2)
  })

  test('serves the API: send a question, answer it, read the feed', async () => {
    served = await startServe(['--data', dir])
    const agent = createAgentClient({ baseUrl: served.url, token: agentToken })
    const person = createPersonClient({ baseUrl: served.url, token: personToken })
    expect(await agent.health()).toEqual({ ok: true })
    const { message } = await agent.send({
      body: {
        title: 'Ship it?',
        blocks: [{ type: 'choice', id: 'go', options: [{ label: 'Yes' }, { label: 'No' }] }],
      },
    })
    const waiting = agent.ask(message.id, 10)
    await person.answer(message.id, 'Yes')
    const { answer } = await waiting
    expect(answer).toBe('Yes')
    const feed = await agent.feed({ since: 0 })
    expect(feed.messages).toHaveLength(1)
    const page = await fetch(`${served.url}/`)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(await page.text()).toContain('Hark')
    // One log line per request, without query strings.
    expect(served.log()).toMatch(/POST \/v1\/messages 200/)
  })

  test('admin commands work while the server runs', async () => {
    const channel = await run([
      'admin',
      'channel',
      'add',
      '--user',
      'me@example.com',
      '--data',
      dir,
    ])
    expect(channel.code).toBe(0)
    const token = channel.stdout.trim().split('\n').at(-1) as string
    const agent = createAgentClient({ baseUrl: (served as Served).url, token })
    expect((await agent.channel()).channel.label).toBe('Agent')
  })

  test('SIGTERM answers held long-polls and exits 0', async () => {
    const s = served as Served
    const agent = createAgentClient({ baseUrl: s.url, token: agentToken })
    const { cursor } = await agent.feed({ since: 0 })
    const held = agent.feed({ since: cursor, wait: 50 })
    await Bun.sleep(200)
    const started = Date.now()
    s.proc.kill('SIGTERM')
    const answered = await held
    expect(answered).toEqual({ messages: [], cursor, has_more: false })
    expect(await s.proc.exited).toBe(0)
    expect(Date.now() - started).toBeLessThan(8000)
    expect(s.log()).toContain('SIGTERM: shutting down')
    served = undefined
  })

  test('acknowledged writes are there after restart', async () => {
    served = await startServe(['--data', dir])
    const agent = createAgentClient({ baseUrl: served.url, token: agentToken })
    const feed = await agent.feed({ since: 0 })
    expect(feed.messages).toHaveLength(1)
    served.proc.kill('SIGTERM')
    await served.proc.exited
    served = undefined
  })
})

describe('dist/hark startup errors', () => {
  beforeAll(() => requireBinary())

  test('port already in use', async () => {
    const dir = tempDir('hark-bin-')
    const blocker = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('x') })
    try {
      const r = await run([
        'serve',
        '--data',
        dir,
        '--host',
        '127.0.0.1',
        '--port',
        String(blocker.port),
      ])
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(`port ${blocker.port} on 127.0.0.1 is already in use`)
    } finally {
      blocker.stop(true)
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('data directory that cannot be created', async () => {
    const dir = tempDir('hark-bin-')
    const file = join(dir, 'a-file')
    writeFileSync(file, 'x')
    try {
      const r = await run(['serve', '--data', join(file, 'data'), '--port', '0'])
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('is not writable')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('database newer than the binary', async () => {
    const dir = tempDir('hark-bin-')
    try {
      expect((await run(['admin', 'user', 'add', 'a@example.com', '--data', dir])).code).toBe(0)
      const db = new Database(join(dir, 'hark.db'))
      db.run('PRAGMA user_version = 999')
      db.close()
      const r = await run(['serve', '--data', dir, '--port', '0'])
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('schema version 999, newer than this hark understands')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('invalid flags are usage errors', async () => {
    for (const args of [
      ['--port', 'abc'],
      ['--write-limit', '-1'],
      ['--base-url', 'ftp://x'],
      ['--bogus'],
    ]) {
      const r = await run(['serve', ...args])
      expect(r.code).toBe(2)
      expect(r.stderr).toStartWith('hark: ')
    }
  })

  test('environment variables configure serve', async () => {
    const dir = tempDir('hark-bin-')
    try {
      const s = await startServe([], { HARK_DATA: dir, HARK_BASE_URL: 'https://hark.example.com/' })
      expect(s.log()).toContain(`base URL https://hark.example.com, data ${dir}`)
      s.proc.kill('SIGTERM')
      expect(await s.proc.exited).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('at a terminal, a fresh server shows the setup link itself', async () => {
    const dir = tempDir('hark-bin-')
    // `script` runs the server on a pseudo-terminal, as a person starting it by hand would.
    // `exec`: the server is script's child itself, whatever shell `script -c` runs.
    const command = `exec ${HARK} serve --host 127.0.0.1 --port 0 --data ${dir} --base-url https://hark.example.com`
    const proc = Bun.spawn(['script', '-qfec', command, '/dev/null'], {
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 20_000,
    })
    try {
      let out = ''
      const decoder = new TextDecoder()
      for await (const chunk of proc.stdout) {
        out += decoder.decode(chunk)
        if (/setup needed: open \S+#token=\w+/.test(out)) break
      }
      const link = readFileSync(join(dir, 'setup-token'), 'utf8').trim()
      expect(out).toContain(`setup needed: open ${link} within an hour`)
    } finally {
      proc.kill('SIGKILL')
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('SIGHUP at a terminal is a hang-up: the server ends cleanly, exit 0', async () => {
    const dir = tempDir('hark-bin-')
    const command = `exec ${HARK} serve --host 127.0.0.1 --port 0 --data ${dir}`
    const proc = Bun.spawn(['script', '-qfec', command, '/dev/null'], {
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 20_000,
    })
    try {
      let out = ''
      const decoder = new TextDecoder()
      const reader = proc.stdout.getReader()
      while (!/listening on/.test(out)) {
        const { value, done } = await reader.read()
        if (done) break
        out += decoder.decode(value)
      }
      // script's one child is the server (exec): the hang-up goes to it, not to script.
      const children = readFileSync(`/proc/${proc.pid}/task/${proc.pid}/children`, 'utf8')
      const server = Number(children.trim().split(' ')[0])
      expect(readFileSync(`/proc/${server}/cmdline`, 'utf8')).toContain('serve')
      process.kill(server, 'SIGHUP')
      while (!/SIGHUP: shutting down/.test(out)) {
        const { value, done } = await reader.read()
        if (done) break
        out += decoder.decode(value)
      }
      reader.releaseLock()
      expect(out).toContain('SIGHUP: shutting down')
      expect(await proc.exited).toBe(0)
      expect(existsSync(`/proc/${server}`)).toBe(false)
    } finally {
      proc.kill('SIGKILL')
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('SIGHUP with no terminal and nothing to reload (systemctl reload) keeps serving', async () => {
    const dir = tempDir('hark-bin-')
    const served = await startServe(['--data', dir])
    try {
      served.proc.kill('SIGHUP')
      await logged(served, 'SIGHUP: nothing to reload')
      expect(served.log()).toContain('SIGHUP: nothing to reload (no --tls-cert or --domain)')
      expect((await fetch(`${served.url}/health`)).status).toBe(200)
      expect(served.proc.exitCode).toBeNull()
    } finally {
      served.proc.kill('SIGTERM')
      await served.proc.exited
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a fresh server keeps a one-time setup link in a 0600 file, never in its log', async () => {
    const dir = tempDir('hark-bin-')
    try {
      const first = await startServe(['--data', dir, '--base-url', 'https://hark.example.com'])
      await logged(first, 'setup needed')
      const file = join(dir, 'setup-token')
      // stderr is a pipe here, as under systemd: the log names the file, not the link.
      expect(first.log()).toContain(`setup needed: the one-time setup link is in ${file}`)
      expect(first.log()).not.toContain('#token=')
      const link = readFileSync(file, 'utf8').trim()
      expect(link).toMatch(/^https:\/\/hark\.example\.com\/setup#token=\w{32}$/)
      expect(first.log()).not.toContain(link.slice(link.indexOf('=') + 1))
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const info = (await (await fetch(`${first.url}/v1/info`)).json()) as { needs_setup: boolean }
      expect(info.needs_setup).toBe(true)
      first.proc.kill('SIGTERM')
      await first.proc.exited
      // A new start makes a new link; the old one is dead.
      const second = await startServe(['--data', dir, '--base-url', 'https://hark.example.com'])
      await logged(second, 'setup needed')
      expect(second.log()).not.toContain('#token=')
      expect(readFileSync(file, 'utf8').trim()).not.toBe(link)
      second.proc.kill('SIGTERM')
      await second.proc.exited
      // Once there is an owner, no link is printed and the file is gone.
      expect(
        (await run(['admin', 'user', 'add', 'o@example.com', '--owner', '--data', dir])).code,
      ).toBe(0)
      const third = await startServe(['--data', dir])
      await fetch(`${third.url}/health`)
      expect(third.log()).not.toContain('setup needed')
      expect(existsSync(file)).toBe(false)
      third.proc.kill('SIGTERM')
      await third.proc.exited
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
