import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { checkAnswerProof } from '../../src/agent/proof.ts'
import type { Message } from '../../src/messages/schema.ts'
import { approvalRequest } from '../../src/shared/canonical.ts'
import { axeViolations } from './axe-check.ts'
import { overflowing } from './fixtures.ts'
import { PHONE, screenshot, webTest } from './harness.ts'
import { registerPasskey, virtualAuthenticator } from './signing-fixture.ts'

/**
 * Allowing several waiting approvals with one passkey gesture, on a phone (issue 29 item 5):
 * in "Waiting on you" each approval that may be allowed with others (not destructive, signed)
 * has a checkbox, "All Bash (3)" selects the similar ones, and "Allow 3" runs one passkey prompt
 * (Chromium's virtual authenticator) whose proof each agent checks for its own item with the
 * keys it pins. Both themes, axe clean, no overflow; the screenshots are in test/web/screenshots.
 */
const web = webTest({ label: 'Claude Code' })

const approval = (tool: string, input: unknown, danger?: boolean) => ({
  type: 'approval',
  id: 'approval',
  tool,
  input,
  ...(danger ? { danger } : {}),
})

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('waiting on you: allow several at once', () => {
  test('select the similar ones, allow them with one passkey prompt; each agent verifies its own', async () => {
    const { page, errors } = await web.open({ viewport: PHONE })
    const authenticator = await virtualAuthenticator(page)
    await registerPasskey(page, web.server)
    const codex = await web.server.addChannel('Codex')
    const a = web.server.agent
    const bash = (command: string) => approval('Bash', { command })
    const asked: { agent: typeof a; channelId: string; message: Message; command: string }[] = []
    for (const [agent, channelId, command] of [
      [a, web.server.channelId, 'npm test'],
      [a, web.server.channelId, 'npm run lint'],
      [codex.agent, codex.channelId, 'npm run build'],
    ] as const) {
      const { message } = await agent.send({
        body: { title: 'Run a command?', blocks: [bash(command)] },
      } as never)
      asked.push({ agent, channelId, message: message as Message, command })
    }
    // Not picked with them: another tool (alone of its kind), a destructive one, a question.
    await a.send({
      body: {
        blocks: [approval('Edit', { file_path: '/srv/a.ts', old_string: 'a', new_string: 'b' })],
      },
    } as never)
    await codex.agent.send({
      body: { title: 'Wipe the cache?', blocks: [approval('Bash', { command: 'rm -rf /' }, true)] },
    } as never)
    await codex.agent.send({
      body: { title: 'Ship it?', blocks: [{ type: 'confirm', id: 'go', label: 'Ship' }] },
    } as never)

    let batchPosts = 0
    let singlePosts = 0
    page.on('request', (r) => {
      if (r.method() !== 'POST') return
      if (r.url().endsWith('/v1/app/answers')) batchPosts++
      if (/\/v1\/app\/messages\/[^/]+\/answer$/.test(r.url())) singlePosts++
    })
    await page.goto(`${web.server.url}/`)
    await page.locator('.open-ask', { hasText: 'Ship it?' }).waitFor()
    const boxes = page.locator('.open-asks input[type="checkbox"]')
    await boxes.first().waitFor()
    // Three Bash commands and the edit can be picked; the destructive one and the question not.
    expect(await boxes.count()).toBe(4)
    expect(await page.locator('.open-ask-row').count()).toBe(6)
    const similar = page.getByRole('button', { name: 'All Bash (3)' })
    expect(await similar.getAttribute('aria-pressed')).toBe('false')
    expect(await page.getByRole('button', { name: /^All Edit/ }).count()).toBe(0)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      expect({ scheme, found: await axeViolations(page) }).toEqual({ scheme, found: [] })
      await screenshot(page, `batch-list-phone-${scheme}`)
    }
    expect(await overflowing(page)).toEqual([])

    // The agents wait on their questions, as the hooks do.
    const waits = asked.map((q) => q.agent.ask(q.message.id, 25)) as Promise<{
      message: Message
      answer: unknown
    }>[]
    await similar.click()
    expect(await similar.getAttribute('aria-pressed')).toBe('true')
    const allow = page.getByRole('button', { name: 'Allow 3', exact: true })
    await allow.waitFor()
    expect(
      await page.getByRole('checkbox', { name: 'Select: Run a command? (Codex)' }).isChecked(),
    ).toBe(true)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      expect({ scheme, found: await axeViolations(page) }).toEqual({ scheme, found: [] })
      await screenshot(page, `batch-selected-phone-${scheme}`)
    }
    expect(await overflowing(page)).toEqual([])
    await page.emulateMedia({ colorScheme: 'light' })

    // The prompt closed (or the person not verified): nothing is sent, the selection stays.
    await authenticator.setVerified(false)
    await allow.click()
    const notSent = page.getByRole('alert').filter({ hasText: 'Nothing was sent.' })
    await notSent.waitFor()
    expect(await notSent.textContent()).toContain('Tap Allow to try again.')
    expect([batchPosts, singlePosts]).toEqual([0, 0])
    expect(await similar.getAttribute('aria-pressed')).toBe('true')
    await screenshot(page, 'batch-cancelled-phone')
    await authenticator.setVerified(true)
    const signedBefore = await authenticator.signCount()

    await allow.click()
    await page
      .getByRole('status')
      .filter({ hasText: 'Allowed 3, signed with one passkey.' })
      .waitFor()
    // One prompt, one request, for the three.
    expect((await authenticator.signCount()) - signedBefore).toBe(1)
    expect([batchPosts, singlePosts]).toEqual([1, 0])

    // Each agent checks its own item with the keys it pins and the hash it computes itself.
    const { approvers } = await a.channel()
    const pinned = {
      ...approvers,
      keys: approvers.keys.map((k) => ({ ...k, jwk: k.jwk as JsonWebKey })),
    }
    const got = await Promise.all(waits)
    for (const [i, q] of asked.entries()) {
      const answer = got[i] as { message: Message; answer: unknown }
      expect(answer.answer).toEqual({ decision: 'allow' })
      expect(answer.message.ask?.proof?.batch?.items).toHaveLength(3)
      const check = checkAnswerProof(
        answer.message.ask?.proof,
        {
          channel_id: q.channelId,
          message_id: q.message.id,
          request_hash: sha256(approvalRequest('Bash', { command: q.command })),
          answer: answer.answer,
          approval: true,
          asked_at: q.message.created_at,
          now: Date.now(),
        },
        pinned,
      )
      expect(check.ok).toBe(true)
    }
    // Left: the edit (alone now: no checkboxes), the destructive one and the question.
    await page.waitForFunction(() => document.querySelectorAll('.open-ask').length === 3)
    expect(await boxes.count()).toBe(0)
    // What was done stays said, also once nothing is left to pick.
    expect(await page.getByRole('status').filter({ hasText: 'Allowed 3' }).count()).toBe(1)
    await screenshot(page, 'batch-done-phone')
    // The approval history says the decision was one signature over several.
    await page.goto(`${web.server.url}/c/${encodeURIComponent(web.server.channelId)}/approvals`)
    const by = page.locator('.history-item.allowed .history-by')
    await by.first().waitFor()
    expect(await by.count()).toBe(2)
    for (const text of await by.allTextContents()) {
      expect(text).toMatch(/^Signed with passkey .*, one signature for 3 approvals$/)
    }
    expect(errors).toEqual([])
  }, 60_000)
})
