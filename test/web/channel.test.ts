import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { tempDir } from '../harness.ts'
import { type ChannelSession, startChannelClient } from '../harnesses/channel-client.ts'
import { HARK } from '../harnesses/hark-claude.ts'
import { PHONE, webTest } from './harness.ts'
import { registerPasskey, virtualAuthenticator } from './signing-fixture.ts'

/**
 * The phone side of `hark mcp --channel` (Chromium at 390×844, the real app): what the person
 * writes in the agent's thread reaches the session as a channel event, and a permission prompt
 * relayed by Claude Code's channel protocol (a client speaking it exactly: test/mcp/channel.test.ts
 * says why not the real binary) is allowed with the phone's passkey and relayed, the signature
 * checked by the channel against the key `hark keys refresh` pinned.
 */
const web = webTest({ label: 'Claude Code' })
const home = tempDir('hark-web-channel-')
let page: Page
let channel: ChannelSession

beforeAll(async () => {
  ;({ page } = await web.open({ viewport: PHONE }))
  await virtualAuthenticator(page)
  await registerPasskey(page, web.server)
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    HARK_URL: web.server.url,
    HARK_TOKEN: web.server.agentToken,
  }
  const pinned = Bun.spawn([...HARK.argv, 'keys', 'refresh'], { env, stdout: 'pipe' })
  expect(await new Response(pinned.stdout).text()).toContain('pinned on first use')
  channel = await startChannelClient({ ...env, CLAUDE_CODE_SESSION_ID: 'session-web-channel' })
  await page.goto(`${web.server.url}/c/${web.server.channelId}`)
  await page.locator('.messages-inner').waitFor()
})
afterAll(async () => {
  await channel?.client.close()
  rmSync(home, { recursive: true, force: true })
})

describe('the channel, from the phone', () => {
  test('a message written on the phone reaches the session', async () => {
    await page.getByRole('textbox', { name: /message/i }).fill('also update the changelog')
    await page.getByRole('button', { name: /^send$/i }).click()
    const event = await channel.notified(
      'notifications/claude/channel',
      (p) => p.content === 'also update the changelog',
    )
    expect(event.meta).toMatchObject({ from: 'person' })
  }, 60_000)

  test('a relayed permission prompt allowed on the phone with the passkey is relayed as allow', async () => {
    await channel.permissionRequest('abcde')
    const card = page.locator('article', { has: page.locator('.approval') }).last()
    await card.getByText('touch made-by-hark').first().waitFor()
    await card.getByRole('button', { name: 'Allow', exact: true }).click()
    expect(
      await channel.notified(
        'notifications/claude/channel/permission',
        (p) => p.request_id === 'abcde',
      ),
    ).toEqual({ request_id: 'abcde', behavior: 'allow' })
  }, 60_000)
})
