import { beforeAll, describe, expect, test } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import type { PinnedApprovers } from '../../src/agent/proof.ts'
import { checkAssertion } from '../../src/agent/proof.ts'
import { matches, type PolicyClaim } from '../../src/shared/policy.ts'
import { axeViolations } from './axe-check.ts'
import { overflowing } from './fixtures.ts'
import { PHONE, screenshot, webTest } from './harness.ts'
import { type Authenticator, registerPasskey, virtualAuthenticator } from './signing-fixture.ts'

/**
 * Approval rules on a phone (Chromium, 390 px, a virtual passkey added in Settings): the card's
 * "Always allow…" shows the rule in words, lets the person narrow it (never widen it), and
 * signs it with one passkey prompt; a destructive command's rule is exact and says why; the
 * Policies screen (from Settings and from the card) lists each rule with where it applies, its
 * expiry and use, and revokes it with one tap: a signed revocation. What the app signs is checked as the agent checks it, with the keys it pins.
 */
const web = webTest({ label: 'Claude Code' })
let page: Page
let errors: string[]
let authenticator: Authenticator

beforeAll(async () => {
  ;({ page, errors } = await web.open({ viewport: PHONE }))
  authenticator = await virtualAuthenticator(page)
  await registerPasskey(page, web.server)
  await page.goto(`${web.server.url}/c/${web.server.channelId}`)
  await page.locator('.messages-inner').waitFor()
})

async function askApproval(tool: string, input: unknown, cwd = '/home/me/app'): Promise<Locator> {
  const { message } = await web.server.agent.send({
    body: { blocks: [{ type: 'approval', id: 'approval', tool, input, cwd }] },
  } as never)
  const article = page.locator(`article[data-id="${message.id}"]`)
  await article.locator('.approval').waitFor()
  return article
}

/** The agent's own check of a served policy: the keys it pins from `GET /v1/channel`. */
async function agentVerifies(served: { claim: string; proof: unknown }) {
  const { approvers } = await web.server.agent.channel()
  const pinned = approvers as unknown as PinnedApprovers
  return checkAssertion(served.proof, served.claim, pinned)
}

const served = async () =>
  (await web.server.agent.policies()).policies as {
    id: string
    claim: string
    proof: unknown
    revocation?: { claim: string; proof: unknown }
  }[]

describe('the rule editor on the approval card', () => {
  test('Always allow…: the rule in words, narrowed, signed once, checked as the agent checks it', async () => {
    const article = await askApproval('Bash', { command: 'npm test -- --watch' })
    await article.getByRole('button', { name: 'Always allow…' }).click()
    const form = article.getByRole('form', { name: 'Always allow' })
    await expect(form.locator('.ap-rule-words').textContent()).resolves.toBe(
      'Allow Bash commands starting `npm test` for this agent',
    )
    // Widening is refused; narrowing is taken.
    const prefix = form.getByLabel('Commands starting with')
    await prefix.fill('npm')
    await form.getByRole('alert').waitFor()
    expect(await form.getByRole('button', { name: 'Sign and save' }).isDisabled()).toBe(true)
    await prefix.fill('npm test --')
    await form.getByLabel('This directory (/home/me/app)').check()
    await form.getByLabel('For').selectOption('week')
    await screenshot(page, 'policies-editor-phone')
    expect(await overflowing(page)).toEqual([])
    expect(await axeViolations(page)).toEqual([])
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'policies-editor-phone-dark')
    expect(await axeViolations(page)).toEqual([])
    await page.emulateMedia({ colorScheme: 'light' })

    const before = await authenticator.signCount()
    await form.getByRole('button', { name: 'Sign and save' }).click()
    await article.getByText(/^Saved and signed:/).waitFor()
    expect(await authenticator.signCount()).toBe(before + 1)
    const [policy] = await served()
    const claim = JSON.parse(policy?.claim as string) as PolicyClaim
    expect(claim.rule).toEqual({
      effect: 'allow',
      tool: 'Bash',
      match: { kind: 'prefix', command: 'npm test --' },
      where: { kind: 'cwd', channel_id: web.server.channelId, cwd: '/home/me/app' },
    })
    expect(claim.expires_at - claim.created_at).toBe(7 * 24 * 3600_000)
    expect(await agentVerifies(policy as { claim: string; proof: unknown })).toMatchObject({
      ok: true,
    })
    expect(matches(claim.rule, { tool: 'Bash', input: { command: 'npm test -- --watch' } })).toBe(
      true,
    )
    // The card itself is still to be decided.
    expect(await article.getByRole('button', { name: 'Allow', exact: true }).isVisible()).toBe(true)
  })

  test('a destructive command: the rule is the exact command, and the card says why', async () => {
    const article = await askApproval('Bash', { command: 'rm -rf build' })
    await article.getByRole('button', { name: 'Always allow…' }).click()
    const form = article.getByRole('form', { name: 'Always allow' })
    expect(await form.locator('.ap-rule-words').textContent()).toBe(
      'Allow Bash `rm -rf build` (exactly) for this agent',
    )
    expect(await form.locator('.ap-rule-why').textContent()).toContain(
      'for this exact command only',
    )
    expect(await form.getByLabel('Commands starting with').count()).toBe(0)
    await form.getByRole('button', { name: 'Cancel' }).click()
  })

  test('Never allow…: a deny rule with the message for the agent', async () => {
    const article = await askApproval('Bash', { command: 'git push origin main' })
    await article.getByRole('button', { name: 'Never allow…' }).click()
    const form = article.getByRole('form', { name: 'Never allow' })
    await form.getByLabel('Message to the agent').fill('Open a pull request instead')
    await form.getByLabel('All my agents').check()
    await form.getByRole('button', { name: 'Sign and save' }).click()
    await article.getByText(/^Saved and signed:/).waitFor()
    const deny = (await served())
      .map((p) => JSON.parse(p.claim) as PolicyClaim)
      .find((c) => c.rule.effect === 'deny')
    expect(deny?.rule).toMatchObject({
      match: { kind: 'prefix', command: 'git push' },
      where: { kind: 'all' },
      message: 'Open a pull request instead',
    })
  })
})

test('"Allow for this session" shows what it will remember before the tap', async () => {
  const { message } = await web.server.agent.send({
    body: {
      blocks: [
        {
          type: 'approval',
          id: 'approval',
          tool: 'Bash',
          input: { command: 'rm -rf dist' },
          scopes: ['once', 'session'],
          session_rules: ['Bash(rm -rf dist)'],
        },
      ],
    },
  } as never)
  const article = page.locator(`article[data-id="${message.id}"]`)
  await article.locator('.approval').waitFor()
  expect(await article.locator('.ap-session-rules').textContent()).toBe(
    'Allow for this session remembers: Bash(rm -rf dist)',
  )
})

describe('suggestions', () => {
  /** The person allowed `command` (in the app or from a notification: the history records it). */
  async function allowed(command: string) {
    const { message } = await web.server.agent.send({
      body: { blocks: [{ type: 'approval', id: 'approval', tool: 'Bash', input: { command } }] },
    } as never)
    await web.server.person.answer(message.id, { decision: 'allow' })
  }

  /** A new card for `command`, once its look at the history is done. */
  async function cardAfterHistory(command: string) {
    const read = page.waitForResponse((r) => r.url().includes('/approvals?'))
    const article = await askApproval('Bash', { command })
    await read
    return article
  }

  test('after 3 allows of the same kind the card offers the rule; never for a destructive command', async () => {
    for (const c of ['npm run lint', 'npm run build', 'npm run test']) await allowed(c)
    const article = await cardAfterHistory('npm run fmt')
    const offer = article.locator('.ap-suggestion')
    await offer.waitFor()
    expect(await offer.textContent()).toBe(
      'You allowed commands starting `npm run` 3 times. Always allow…',
    )
    await offer.getByRole('button', { name: 'Always allow…' }).click()
    expect(
      await article
        .getByRole('form', { name: 'Always allow' })
        .locator('.ap-rule-words')
        .textContent(),
    ).toBe('Allow Bash commands starting `npm run` for this agent')

    for (let i = 0; i < 3; i++) await allowed('sudo systemctl restart app')
    // A destructive command does not even look at the history.
    const danger = await askApproval('Bash', { command: 'sudo systemctl restart app' })
    await danger.locator('.ap-rule-starters').waitFor()
    expect(await danger.locator('.ap-suggestion').count()).toBe(0)
    // Two of a kind are not yet a habit.
    for (const c of ['make docs', 'make site']) await allowed(c)
    const two = await cardAfterHistory('make all')
    expect(await two.locator('.ap-suggestion').count()).toBe(0)
  })
})

describe('the Policies screen', () => {
  test('reached from Settings and from the card; each rule in words, where, expiry, use; Revoke is one tap, signed, verified as the agent verifies it', async () => {
    const [first] = await served()
    await web.server.agent.policyUse(first?.id as string, 'npm test -- --watch')
    // From Settings: the card says how many rules are in force and leads to the screen.
    await page.goto(`${web.server.url}/settings#policies`)
    const card = page.getByRole('region', { name: 'Approval rules' })
    await card.getByText(/^\d+ rules? in force/).waitFor()
    await card.getByRole('link', { name: 'Your approval rules' }).click()
    await page.waitForURL(/\/policies$/)
    const rules = page.getByRole('list', { name: 'Your rules' })
    const row = rules.locator('li', { hasText: 'Bash commands starting `npm test --`' })
    await row.getByText(/Used 1 time, last/).waitFor()
    expect(await row.locator('.policy-facts').textContent()).toBe(
      'Applies toClaude Code, in /home/me/app and belowExpiresin 7 daysUseUsed 1 time, last just now',
    )
    const deny = rules.locator('li', { hasText: 'Never allow Bash commands starting `git push`' })
    expect(await deny.locator('.policy-facts').textContent()).toContain(
      'Applies toAll your agentsMessage to the agent“Open a pull request instead”',
    )
    await screenshot(page, 'policies-screen-phone')
    expect(await overflowing(page)).toEqual([])
    expect(await axeViolations(page)).toEqual([])
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'policies-screen-phone-dark')
    expect(await axeViolations(page)).toEqual([])
    await page.emulateMedia({ colorScheme: 'light' })
    const wide = await page.evaluate(
      () => document.documentElement.scrollWidth > document.documentElement.clientWidth,
    )
    expect(wide).toBe(false)

    // One tap: one passkey assertion over the revocation, nothing else asked.
    const before = await authenticator.signCount()
    await row.getByRole('button', { name: /^Revoke/ }).click()
    const gone = page
      .getByRole('list', { name: 'Revoked rules' })
      .locator('li', { hasText: 'Bash commands starting `npm test --`' })
    await gone.getByText('Revoked').waitFor()
    expect(await authenticator.signCount()).toBe(before + 1)
    expect(await gone.getByRole('button').count()).toBe(0)
    const revoked = (await served()).find((p) => p.id === first?.id)
    const rev = revoked?.revocation as { claim: string; proof: unknown }
    expect(JSON.parse(rev.claim)).toMatchObject({
      type: 'hark.policy.revoke',
      policy_id: first?.id,
    })
    expect(await agentVerifies(rev)).toMatchObject({ ok: true })
    await screenshot(page, 'policies-screen-revoked-phone')
    expect(await axeViolations(page)).toEqual([])

    // From an approval card: "Your rules" beside the starters.
    await page.goto(`${web.server.url}/c/${web.server.channelId}`)
    await page.locator('.messages-inner').waitFor()
    const article = await askApproval('Bash', { command: 'ls -la' })
    await article.getByRole('link', { name: 'Your rules' }).scrollIntoViewIfNeeded()
    await screenshot(page, 'policies-card-link-phone')
    expect(await axeViolations(page)).toEqual([])
    await article.getByRole('link', { name: 'Your rules' }).click()
    await page.waitForURL(/\/policies$/)
    await page.getByRole('heading', { name: 'Approval rules', level: 1 }).waitFor()
    expect(errors).toEqual([])
  })
})
