import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, statSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname } from 'node:path'
import { startTestServer, type TestServer } from '../harness.ts'
import { type Cli, makeCli, removeHome } from './live.ts'

let server: TestServer
const clis: Cli[] = []
const cli = () => {
  const c = makeCli()
  clis.push(c)
  return c
}

beforeAll(async () => {
  server = await startTestServer({ listen: true })
})
afterAll(async () => {
  await server.close()
  for (const c of clis) removeHome(c)
})

const stored = (c: Cli) =>
  JSON.parse(readFileSync(c.configFile, 'utf8')) as {
    profiles: Record<string, { url: string; token: string; channel: { id: string; label: string } }>
  }

describe('hark init (device pairing)', () => {
  test('prints the link and code, waits for the approval, stores the token 0600 in a 0700 dir', async () => {
    const c = cli()
    const init = c.spawn(['init', server.url, '--label', 'Laptop build'])
    const [, link, code] = await init.stderrMatch(/(http\S+\/pair\?code=(\w{4}-\w{4}))/)
    expect(link).toStartWith(server.url)
    await init.stderrMatch(new RegExp(`approve the code ${code}`))
    // The approval comes from the person while the CLI is held in its long-poll.
    await Bun.sleep(300)
    const approved = await (await server.sessionClient()).approvePairing(code as string)
    expect(approved.channel.label).toBe('Laptop build')
    const done = await init.finished()
    expect(done.code).toBe(0)
    expect(done.stdout).toContain('"Laptop build"')

    const profile = stored(c).profiles.default
    expect(profile?.url).toBe(server.url)
    expect(profile?.token).toMatch(/^hark_agent_/)
    expect(profile?.channel).toEqual(approved.channel)
    expect(statSync(c.configFile).mode & 0o777).toBe(0o600)
    expect(statSync(dirname(c.configFile)).mode & 0o777).toBe(0o700)

    const status = await c.run(['status', '--json'])
    expect(status.code).toBe(0)
    expect(status.json()).toMatchObject({
      profile: 'default',
      url: server.url,
      reachable: true,
      authenticated: true,
      channel: { id: approved.channel.id, label: 'Laptop build' },
    })
  })

  test("sends this machine's host name: the app shows it with the code", async () => {
    const c = cli()
    const init = c.spawn(['init', server.url])
    const [, code] = await init.stderrMatch(/approve the code (\w{4}-\w{4})/)
    const seen = await server.person.call<{ pairing: { host: string | null } }>(
      'GET',
      `/v1/app/pairings/${code}`,
    )
    expect(seen.pairing.host).toBe(hostname())
    await server.person.call('POST', `/v1/app/pairings/${code}/deny`)
    expect((await init.finished()).code).toBe(1)
  })

  test('--json prints the profile, url and channel, never the token', async () => {
    const c = cli()
    const init = c.spawn(['init', `${server.url}/`, '--json', '--profile', 'work'])
    const [, code] = await init.stderrMatch(/approve the code (\w{4}-\w{4})/)
    await (await server.sessionClient()).approvePairing(code as string, 'Named in the app')
    const done = await init.finished()
    expect(done.code).toBe(0)
    const out = done.json()
    expect(out).toEqual({
      profile: 'work',
      url: server.url,
      channel: { id: expect.any(String), label: 'Named in the app' },
      // The test server's person signs in without a passkey: none to pin.
      keys: 0,
    })
    expect(done.stdout).not.toContain('hark_agent_')
    expect(stored(c).profiles.work?.token).toMatch(/^hark_agent_/)
    expect(stored(c).profiles.default).toBeUndefined()
  })

  test('a denied pairing exits 1 and stores nothing', async () => {
    const c = cli()
    const init = c.spawn(['init', server.url])
    const [, code] = await init.stderrMatch(/approve the code (\w{4}-\w{4})/)
    await server.person.denyPairing(code as string)
    const done = await init.finished()
    expect(done.code).toBe(1)
    expect(done.stderr).toContain('denied')
    expect((await c.run(['status'])).code).toBe(4)
  })

  test('a bad URL is a usage error; an unreachable server is exit 1', async () => {
    const c = cli()
    expect((await c.run(['init', 'ftp://example.com'])).code).toBe(2)
    expect((await c.run(['init'])).code).toBe(2)
    const down = await c.run(['init', 'http://127.0.0.1:1'])
    expect(down.code).toBe(1)
    expect(down.stderr).toContain('cannot reach the server')
  })
})

describe('hark join', () => {
  test('redeems a link once and stores the token', async () => {
    const c = cli()
    const { join_link } = await (await server.sessionClient()).createJoinLink({
      label: 'CI runner',
    })
    const joined = await c.run(['join', join_link.link, '--json'])
    expect(joined.code).toBe(0)
    expect(joined.json()).toMatchObject({ url: server.url, channel: { label: 'CI runner' } })
    expect((await c.run(['status'])).stdout).toContain('"CI runner"')
    // Single use: the second redemption is refused (403, exit 4).
    const again = await cli().run(['join', join_link.link])
    expect(again.code).toBe(4)
    expect(again.stderr).toContain('not valid')
  })

  test('a bare code works with --url; junk is a usage error', async () => {
    const c = cli()
    const { join_link } = await (await server.sessionClient()).createJoinLink()
    const joined = await c.run(['join', join_link.code, '--url', server.url])
    expect(joined.code).toBe(0)
    expect((await c.run(['join', 'not a link'])).code).toBe(2)
  })

  test('re-keying an existing channel: the old token stops working', async () => {
    const c = cli()
    const first = await (await server.sessionClient()).createJoinLink({ label: 'Rekeyed' })
    await c.run(['join', first.join_link.link, '--profile', 'old'])
    const channelId = stored(c).profiles.old?.channel.id as string
    const second = await (await server.sessionClient()).createJoinLink({ channel_id: channelId })
    expect((await c.run(['join', second.join_link.link])).code).toBe(0)
    expect(stored(c).profiles.default?.channel.id).toBe(channelId)
    expect((await c.run(['status'])).code).toBe(0)
    const old = await c.run(['status', '--profile', 'old'])
    expect(old.code).toBe(4)
  })
})

describe('hark status and logout', () => {
  test('HARK_URL and HARK_TOKEN work without a config file', async () => {
    const c = cli()
    const ok = await c.run(['status'], {
      env: { HARK_URL: server.url, HARK_TOKEN: server.agentToken },
    })
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('"Test agent"')
  })

  test('a refused token is exit 4; no token is exit 4; an unreachable server is exit 1', async () => {
    const c = cli()
    const bad = await c.run(['status', '--json'], {
      env: { HARK_URL: server.url, HARK_TOKEN: 'hark_agent_nope' },
    })
    expect(bad.code).toBe(4)
    expect(bad.json()).toMatchObject({ reachable: true, authenticated: false })
    expect((await c.run(['status'], { env: { HARK_URL: server.url } })).code).toBe(4)
    const down = await c.run(['status', '--json'], {
      env: { HARK_URL: 'http://127.0.0.1:1', HARK_TOKEN: server.agentToken },
    })
    expect(down.code).toBe(1)
    expect(down.json()).toMatchObject({ reachable: false })
  })

  test('logout forgets the profile; the next command is exit 4', async () => {
    const c = cli()
    const { join_link } = await (await server.sessionClient()).createJoinLink()
    await c.run(['join', join_link.link])
    expect((await c.run(['send', 'hello'])).code).toBe(0)
    const out = await c.run(['logout', '--json'])
    expect(out.code).toBe(0)
    expect(out.json()).toEqual({ profile: 'default', removed: true })
    const after = await c.run(['send', 'hello'])
    expect(after.code).toBe(4)
    expect(after.stderr).toContain('hark init')
    expect((await c.run(['logout'])).stdout).toContain('was not connected')
  })
})
