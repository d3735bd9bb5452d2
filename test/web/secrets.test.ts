import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import type { BrowserContext, Page } from 'playwright-core'
import { generateKeyPair } from '../../src/shared/secret-crypto.ts'
import { type Cli, makeCli, removeHome } from '../cli/live.ts'
import { canary, captureLog, expectNoPlaintext } from '../secrets/canary.ts'
import { PHONE, screenshot, watchErrors, webTest } from './harness.ts'

let cli: Cli
let context: BrowserContext
let page: Page
let errors: string[]
/** Every request body the page sent: the plaintext must be in none of them. */
const sent: string[] = []
const log = captureLog()
const web = webTest({ label: 'Deploy bot', log })

beforeAll(async () => {
  cli = makeCli()
  context = await web.context({ viewport: PHONE })
  page = await context.newPage()
  errors = watchErrors(page)
  page.on('request', (r) => sent.push(`${r.url()} ${r.postData() ?? ''}`))
  await page.goto(`${web.server.url}/c/${web.server.channelId}`)
  await page.locator('.messages-inner').waitFor()
})

afterAll(async () => {
  if (cli) removeHome(cli)
})

describe('a secret request in the thread', () => {
  test('the page encrypts, the CLI decrypts and runs the command with it', async () => {
    const secret = canary()
    const run = cli.spawn(
      [
        'secret',
        'DB_PASSWORD',
        '--description',
        'for the migration',
        '--env',
        'DB_PASSWORD',
        '--',
        'sh',
        '-c',
        'printf %s "$DB_PASSWORD" | sha256sum | cut -d" " -f1',
      ],
      {
        // This person has no passkey: the app sends unsigned (test/web/signed-secret.test.ts signs).
        env: {
          HARK_URL: web.server.url,
          HARK_TOKEN: web.server.agentToken,
          HARK_ALLOW_UNSIGNED: '1',
        },
      },
    )
    const [, id, print] = await run.stderrMatch(/\((sec_\w+)\); fingerprint ([0-9a-f ]{19})/)

    const card = page.locator(`section.b-secret[aria-label="Secret request: DB_PASSWORD"]`)
    await card.waitFor()
    // The page computes the fingerprint from the key it encrypts to: the same as the terminal's.
    await expect(card.locator('.b-secret-print code').textContent()).resolves.toBe(print as string)
    expect(await page.locator('.msg-text', { hasText: 'for the migration' }).count()).toBe(1)
    await screenshot(page, 'secret-request-phone')

    await card.locator('input[type="password"]').fill(secret)
    await card.getByRole('button', { name: 'Encrypt and send' }).click()

    const done = await run.finished()
    expect(done.code).toBe(0)
    expect(done.stdout).toBe(`${createHash('sha256').update(secret).digest('hex')}\n`)
    expect(done.stdout + done.stderr).not.toContain(secret)

    // The feed brings the final state; the field is gone and empty.
    await page.locator('section.b-secret[data-status="delivered"]').waitFor()
    expect(await card.textContent()).toContain('Delivered to the agent')
    expect(await card.locator('input').count()).toBe(0)

    // Only ciphertext left the page.
    const fulfil = sent.find((s) => s.includes(`/v1/app/secrets/${id}/fulfil`))
    expect(fulfil).toMatch(/"ciphertext":"v1\./)
    expect(sent.some((s) => s.includes(secret))).toBe(false)
    expectNoPlaintext(web.server.ctx.config.dataDir, secret, log.text())
    expect(errors).toEqual([])
  })

  test('a withdrawn request shows as cancelled, without a field', async () => {
    const { secret_request } = await web.server.agent.requestSecret({
      name: 'WITHDRAWN',
      public_key: (await generateKeyPair()).publicKey,
    })
    const card = page.locator(`section.b-secret[aria-label="Secret request: WITHDRAWN"]`)
    await card.locator('input[type="password"]').waitFor()
    await web.server.agent.cancelSecret(secret_request.id)
    await page.locator('section.b-secret[data-status="cancelled"]').waitFor()
    expect(await card.textContent()).toContain('Cancelled by the agent')
    expect(await card.locator('input').count()).toBe(0)
    expect(errors).toEqual([])
  })
})
