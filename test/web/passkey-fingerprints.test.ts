import { describe, expect, test } from 'bun:test'
import { describeKeys, reportedApprovers } from '../../src/agent/trust.ts'
import { fingerprint } from '../../src/shared/fingerprint.ts'
import { PHONE, screenshot, webTest } from './harness.ts'
import { registerPasskey, virtualAuthenticator } from './signing-fixture.ts'

/**
 * `hark init` pins the person's passkeys and says to check their fingerprints in the app
 * (issue 28): Settings → Passkeys shows each one's fingerprint exactly as `hark keys` and
 * `hark init` print it, from what the agent itself is told (`GET /v1/channel`).
 */
const web = webTest()

describe('GET /settings: passkey fingerprints', () => {
  test('each passkey shows the fingerprint the agent prints for it; both themes', async () => {
    const { page, errors } = await web.open({ viewport: PHONE })
    await virtualAuthenticator(page)
    const name = await registerPasskey(page, web.server)
    // What the agent pins and prints (`hark init`: "Pinned the person's passkeys ...").
    const pinned = await reportedApprovers(web.server.agent)
    expect(pinned.keys).toHaveLength(1)
    const printed = describeKeys(pinned.keys)
    const expected = fingerprint(pinned.keys[0] as (typeof pinned.keys)[0])
    expect(printed).toBe(`  ${name}  ${expected}`)
    expect(expected).toMatch(/^([0-9a-f]{4} ){7}[0-9a-f]{4}$/)

    const section = page.getByRole('region', { name: 'Passkeys' })
    const shown = section.locator('li', { hasText: name }).locator('code.fingerprint')
    await shown.waitFor()
    expect(await shown.textContent()).toBe(expected)
    expect(await section.textContent()).toContain('hark keys')
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      await section.scrollIntoViewIfNeeded()
      await screenshot(page, `passkey-fingerprint-phone-${scheme}`)
    }
    // The person's passkeys API says the same (what the app reads).
    const listed = await web.server.request('GET', '/v1/app/passkeys', {
      token: web.server.personToken,
    })
    expect(listed.body.passkeys.map((p: { fingerprint: string }) => p.fingerprint)).toEqual([
      expected,
    ])
    expect(errors).toEqual([])
  }, 30_000)
})
